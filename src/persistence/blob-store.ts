import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { blobsDir } from '../util/home-parts.js'

const URI_PREFIX = 'vis-blob:sha256/'
const HEX64 = /^[0-9a-f]{64}$/

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

// Content-addressed files under <home>/blobs/sha256/ab/<hex>. The URI names the content, not a
// path, so the vis home can move. A file is written to a temp name, fsynced and renamed in, so
// a reader (or a crash) sees the whole file or none; the caller commits the row referencing it
// only after put() returns.
export class BlobStore {
  readonly root: string

  constructor(home: string) {
    this.root = join(blobsDir(home), 'sha256')
  }

  pathOf(hex: string): string {
    return join(this.root, hex.slice(0, 2), hex.slice(2))
  }

  static uriOf(hex: string): string {
    return URI_PREFIX + hex
  }

  static hexOf(uri: string): string {
    const hex = uri.startsWith(URI_PREFIX) ? uri.slice(URI_PREFIX.length) : ''
    if (!HEX64.test(hex)) {
      throw new VisError('db.blob-uri', `Not a blob store URI: ${uri}`, { uri })
    }
    return hex
  }

  put(data: Uint8Array): { uri: string; sha256: string } {
    const hex = sha256Hex(data)
    const final = this.pathOf(hex)
    // Same name means same bytes; a whole file is only ever renamed in, so an existing one is done.
    if (existsSync(final) && statSync(final).size === data.byteLength)
      return { uri: BlobStore.uriOf(hex), sha256: hex }
    const dir = join(this.root, hex.slice(0, 2))
    mkdirSync(dir, { recursive: true })
    const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`)
    const fd = openSync(tmp, 'wx', 0o600)
    try {
      let off = 0
      while (off < data.byteLength) off += writeSync(fd, data, off, data.byteLength - off)
      fsyncSync(fd)
    } catch (err) {
      closeSync(fd)
      unlinkSync(tmp)
      throw new VisError(
        'db.blob-write',
        `Cannot write an attachment to ${dir}: ${(err as Error).message}`,
        { path: dir },
        { cause: err },
      )
    }
    closeSync(fd)
    renameSync(tmp, final)
    // The rename itself must reach the disk before the row that points at it commits.
    fsyncDir(dir)
    return { uri: BlobStore.uriOf(hex), sha256: hex }
  }

  read(uri: string): Buffer {
    const hex = BlobStore.hexOf(uri)
    const file = this.pathOf(hex)
    let data: Buffer
    try {
      data = readFileSync(file)
    } catch (err) {
      throw new VisError(
        'db.blob-missing',
        `The attachment file ${file} is missing.`,
        { path: file, uri },
        { cause: err },
      )
    }
    if (sha256Hex(data) !== hex) {
      throw new VisError('db.blob-corrupt', `The attachment file ${file} does not match its checksum.`, {
        path: file,
        uri,
      })
    }
    return data
  }

  // The file of `uri` opened and checked against its name (read through once, a MiB at a time), for
  // an answer that sends it piece by piece: an attachment served to a slow client is not held whole
  // while it drains. The fd stays valid if the file is swept meanwhile; the caller closes it.
  openChecked(uri: string): { fd: number; size: number } {
    const hex = BlobStore.hexOf(uri)
    const file = this.pathOf(hex)
    let fd: number
    try {
      fd = openSync(file, 'r')
    } catch (err) {
      throw new VisError(
        'db.blob-missing',
        `The attachment file ${file} is missing.`,
        { path: file, uri },
        { cause: err },
      )
    }
    try {
      const size = fstatSync(fd).size
      const hash = createHash('sha256')
      const buf = Buffer.allocUnsafe(Math.max(1, Math.min(size, 2 ** 20)))
      let at = 0
      for (let n = 1; at < size && n > 0; at += n) {
        n = readSync(fd, buf, 0, Math.min(buf.byteLength, size - at), at)
        hash.update(buf.subarray(0, n))
      }
      if (at !== size || hash.digest('hex') !== hex) {
        throw new VisError('db.blob-corrupt', `The attachment file ${file} does not match its checksum.`, {
          path: file,
          uri,
        })
      }
      return { fd, size }
    } catch (err) {
      closeSync(fd)
      throw err
    }
  }

  // Deletes files no row references, and temp files a crashed writer left behind. Only files
  // older than the grace period go: a fresh one may belong to a row about to commit.
  sweep(referenced: ReadonlySet<string>, graceMs: number, now: number = Date.now()): number {
    if (!existsSync(this.root)) return 0
    let removed = 0
    for (const prefix of readdirSync(this.root)) {
      const dir = join(this.root, prefix)
      for (const name of readdirSync(dir)) {
        const file = join(dir, name)
        const hex = prefix + name
        const isTemp = name.startsWith('.tmp-')
        if (!isTemp && referenced.has(BlobStore.uriOf(hex))) continue
        if (now - statSync(file).mtimeMs < graceMs) continue
        unlinkSync(file)
        removed++
      }
    }
    return removed
  }
}
