import type { Dirent } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { opendir } from 'node:fs/promises'
import { readCapped } from '../../confinement/beneath.js'
import { checkpoint } from '../../util/check-use-hook.js'
import { VisError } from '../../util/errors.js'
import type { Json } from '../types.js'
import { SNIFF_BYTES, sniffBinary } from './binary.js'
import { at, type PathGuard } from './paths.js'

export const MAX_TEXT_BYTES = 32 * 1024 * 1024

export type Opened =
  | { kind: 'file'; fh: FileHandle; real: string; size: number }
  | { kind: 'directory'; fh: FileHandle; real: string }

export async function openForRead(guard: PathGuard, path: string, op: string): Promise<Opened> {
  const { fh, real } = await guard.open(path, op)
  const st = await fh.stat()
  if (st.isDirectory()) return { kind: 'directory', fh, real }
  if (!st.isFile()) {
    await fh.close()
    throw new VisError('tool.not-a-file', `${op}: '${path}' is not a regular file`, { op, path })
  }
  return { kind: 'file', fh, real, size: st.size }
}

// Reads a whole text file from a verified handle; refuses binary content.
export async function readTextFrom(fh: FileHandle, size: number, path: string, op: string): Promise<string> {
  if (size > MAX_TEXT_BYTES) {
    throw new VisError(
      'tool.too-large',
      `${op}: '${path}' is ${size} bytes, more than the ${MAX_TEXT_BYTES}-byte limit; use grep to find the part you need`,
      { op, path, size },
    )
  }
  // The sandbox may grow the file after the size above was taken: the read is what is bounded.
  await checkpoint('tool.read', path)
  const { data: buf, over } = await readCapped(fh.fd, MAX_TEXT_BYTES)
  if (over) {
    throw new VisError(
      'tool.too-large',
      `${op}: '${path}' grew past the ${MAX_TEXT_BYTES}-byte limit while it was read; use grep to find the part you need`,
      { op, path },
    )
  }
  const type = sniffBinary(buf.subarray(0, SNIFF_BYTES))
  if (type) {
    throw new VisError(
      'tool.binary',
      `${op}: '${path}' is ${type} (${buf.length} bytes), not text; it is not shown`,
      {
        op,
        path,
        size: buf.length,
        type,
      },
    )
  }
  return buf.toString('utf8')
}

export async function readText(
  guard: PathGuard,
  path: string,
  op: string,
): Promise<{ text: string; real: string }> {
  const o = await openForRead(guard, path, op)
  try {
    if (o.kind === 'directory') {
      throw new VisError('tool.is-directory', `${op}: '${path}' is a directory`, { op, path })
    }
    return { text: await readTextFrom(o.fh, o.size, path, op), real: o.real }
  } finally {
    await o.fh.close()
  }
}

export function entryType(d: {
  isDirectory(): boolean
  isSymbolicLink(): boolean
  isFile(): boolean
}): string {
  if (d.isDirectory()) return 'directory'
  if (d.isSymbolicLink()) return 'symlink'
  if (d.isFile()) return 'file'
  return 'other'
}

// A shallow listing of a verified directory handle, of at most `max` entries. A sandbox can fill
// one directory with hundreds of thousands of empty files (no disk budget sees them): the entries
// are read in batches off the event loop, and past `max` the rest are not read at all (so the
// listing is then some `max` of them, sorted, not the first `max` by name).
export async function listDirectory(
  dir: FileHandle,
  max: number,
): Promise<{ entries: { [key: string]: Json }[]; truncated: boolean }> {
  const d = await opendir(at(dir), { bufferSize: 256 })
  const names: Dirent[] = []
  let truncated = false
  try {
    for (let e = await d.read(); e; e = await d.read()) {
      if (names.length === max) {
        truncated = true
        break
      }
      names.push(e)
    }
  } finally {
    await d.close()
  }
  names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { entries: names.map((e) => ({ name: e.name, type: entryType(e) })), truncated }
}
