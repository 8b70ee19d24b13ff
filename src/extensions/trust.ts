import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  opendirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { visHome } from '../util/home.js'
import { readHomeFile } from '../util/home-files.js'
import { openHome } from '../util/home-guard.js'
import { readBounded } from '../util/read-bounded.js'

// A project's extensions run on the host, unconfined, for whoever starts vis in the project. The
// project folder is also a place sessions work in: a block of any session whose roots hold it
// (another engine's, a library's) can write `.vis/extensions` there. So a project's extension
// folder loads only once a person has trusted its exact content: a record in the vis home (never
// reachable by a sandbox: every jail masks it) keyed by the project's real path and a sha256 over
// every file of the folder. Anything changed since, by whoever, is not loaded until trusted again.

// Past these, the folder is not a set of extensions a person reviewed: refused rather than hashed.
// Every entry counts, folders too, and each link followed to one: a session that can write a
// linked folder's target can build a small graph of links whose paths number in the billions.
// Bytes are counted as read, never from a size the file claims (a link to /proc/self/pagemap
// says 0 bytes and reads without end).
const MAX_ENTRIES = 5_000
const MAX_DEPTH = 32
const MAX_BYTES = 32 * 1024 * 1024

export const TRUST_COMMAND = 'vis ext trust'

const TrustFile = z.object({
  version: z.literal(1),
  projects: z.record(z.object({ sha256: z.string(), files: z.number().int(), trustedAt: z.string() })),
})
type TrustFile = z.infer<typeof TrustFile>

export type FolderDigest = { sha256: string; files: string[] }

// What decides whether a project's extension folder loads.
export type ProjectTrust =
  | { state: 'absent' }
  // copy: the trusted bytes in the vis home, what workers put on sys.path (never the folder itself).
  | { state: 'trusted'; digest: FolderDigest; copy: string }
  | { state: 'untrusted' | 'changed'; digest: FolderDigest; dir: string }
  | { state: 'unreadable'; dir: string; reason: string }

const trustPath = (home: string) => join(home, 'trust', 'projects.json')

function projectKey(project: string): string {
  try {
    return realpathSync(project)
  } catch {
    return resolve(project)
  }
}

// Every file under dir (links followed: what they lead to is what Python would import), each as
// its path relative to dir and its bytes. `__pycache__` is left out: the trusted workers never
// read bytecode beside the sources (vis-guest/vis_ext/__init__.py sets a bytecode prefix in the vis home).
// With `copyTo`, each file's bytes are written there as they are hashed: read once through one fd,
// so the copy is exactly what the digest covers, whatever a session writes in the folder meanwhile.
export function folderDigest(dir: string, copyTo?: string): FolderDigest {
  const h = createHash('sha256')
  const files: string[] = []
  let entries = 0
  let bytes = 0
  const walk = (d: string, depth: number) => {
    if (depth > MAX_DEPTH) throw new Error(`${d} is nested more than ${MAX_DEPTH} folders deep`)
    // Counted as they are read, before any is sorted or visited: a folder of 200,000 names met
    // again through a link at every level must not be read whole each time first.
    const names = namesOf(d, MAX_ENTRIES - entries)
    if (names === undefined)
      throw new Error(
        `${dir} holds more than ${MAX_ENTRIES} files and folders (links to folders counted each time)`,
      )
    entries += names.length
    for (const name of names) {
      const full = join(d, name)
      const rel = relative(dir, full)
      // Non-blocking, so a FIFO planted there is refused below rather than hanging the host.
      const fd = openSync(full, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const st = fstatSync(fd)
        if (st.isDirectory()) {
          h.update(`d\0${rel}\0`)
          if (copyTo) mkdirSync(join(copyTo, rel), { mode: 0o700 })
        } else if (st.isFile()) {
          files.push(rel)
          const body = readBounded(fd, MAX_BYTES - bytes)
          if (body === undefined)
            throw new Error(`${dir} holds more than ${MAX_BYTES / 1024 / 1024} MiB of files`)
          bytes += body.length
          h.update(`f\0${rel}\0${body.length}\0`)
          h.update(body)
          if (copyTo) writeFileSync(join(copyTo, rel), body, { mode: 0o600, flag: 'wx' })
          continue
        } else {
          // A FIFO or device: nothing a person reviews, and reading it could hang the host.
          throw new Error(`${full} is not a regular file or folder`)
        }
      } finally {
        closeSync(fd)
      }
      walk(full, depth + 1)
    }
  }
  walk(dir, 0)
  return { sha256: h.digest('hex'), files }
}

// A folder's names but `__pycache__`, sorted; undefined once there are more than `room`, read no
// further than that.
function namesOf(d: string, room: number): string[] | undefined {
  const dir = opendirSync(d)
  try {
    const names: string[] = []
    for (let e = dir.readSync(); e !== null; e = dir.readSync()) {
      if (e.name === '__pycache__') continue
      if (names.push(e.name) > room) return undefined
    }
    return names.sort()
  } finally {
    dir.closeSync()
  }
}

// Where trusted content is copied to: the vis home, which every jail masks, keyed by the digest.
export const trustedCopiesDir = (home: string) => join(home, 'cache', 'trusted-extensions')

// Copies dir into the vis home while hashing it; the copy is kept (and its path returned) only when
// its digest is `expected`. The trusted workers import from the copy, never from the project folder:
// a session that can write there (another engine's, a child rooted beside it, one that swapped a
// link) changes nothing that runs, whenever it writes.
function copyIfTrusted(
  home: string,
  dir: string,
  expected: string | undefined,
): { digest: FolderDigest; copy?: string } {
  const parent = trustedCopiesDir(home)
  mkdirSync(parent, { recursive: true, mode: 0o700 })
  const tmp = mkdtempSync(join(parent, '.tmp-'))
  try {
    const digest = folderDigest(dir, tmp)
    if (digest.sha256 !== expected || digest.files.length === 0) return { digest }
    const copy = join(parent, digest.sha256)
    try {
      // Whole or not at all: a copy under its digest's name is always complete.
      renameSync(tmp, copy)
    } catch (err) {
      // Another process made the same copy first: it holds the same bytes.
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err
    }
    return { digest, copy }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

function readTrust(home: string): TrustFile {
  let text: string | undefined
  try {
    // A record a sandbox can write (the file, or trust/, linked into a session's root) would trust
    // what that sandbox planted: refused, home.file-writable (home-files.ts).
    text = readHomeFile(home, trustPath(home), 'home.file-writable', 'ext.trust')
  } catch (err) {
    if (err instanceof VisError) throw err
    text = undefined
  }
  if (text === undefined) return { version: 1, projects: {} }
  const parsed = TrustFile.safeParse(JSON.parse(text))
  // A damaged record trusts nothing: each project asks again.
  return parsed.success ? parsed.data : { version: 1, projects: {} }
}

// Whether the project's extension folder (dir) may load, as its content is now.
export function projectTrust(home: string | undefined, project: string, dir: string): ProjectTrust {
  let exists = false
  try {
    exists = statSync(dir).isDirectory()
  } catch {}
  if (!exists) return { state: 'absent' }
  let record: TrustFile['projects'][string] | undefined
  try {
    record = readTrust(visHome(home)).projects[projectKey(project)]
  } catch (err) {
    // Trusts nothing, and says why: the folder's warning names the trust file that was refused.
    if (err instanceof VisError) return { state: 'unreadable', dir, reason: err.message }
  }
  let digest: FolderDigest
  let copy: string | undefined
  try {
    // Never trusted: nothing to copy, only the digest to show (written to the vis home, a copy of
    // what a session planted would only be disk spent on it).
    if (record === undefined) digest = folderDigest(dir)
    else ({ digest, copy } = copyIfTrusted(visHome(home), dir, record.sha256))
  } catch (err) {
    return { state: 'unreadable', dir, reason: (err as Error).message }
  }
  // No file, nothing that could run: no trust to ask for.
  if (digest.files.length === 0) return { state: 'absent' }
  if (copy) return { state: 'trusted', digest, copy }
  return { state: record ? 'changed' : 'untrusted', digest, dir }
}

// `vis ext trust`: records the folder's content as it is now as trusted for this project.
export function trustProject(home: string | undefined, project: string, dir: string): FolderDigest {
  let digest: FolderDigest
  try {
    digest = folderDigest(dir)
  } catch (err) {
    throw new VisError(
      'ext.project-untrusted',
      `${dir} cannot be trusted: ${(err as Error).message}. Keep only the extension files there and try again.`,
      { op: 'ext.trust', path: dir },
    )
  }
  // A record in a home a running sandbox can write would be that sandbox's to change (home-guard.ts).
  const h = openHome(home, 'ext.trust')
  const all = readTrust(h)
  all.projects[projectKey(project)] = {
    sha256: digest.sha256,
    files: digest.files.length,
    trustedAt: new Date().toISOString(),
  }
  const path = trustPath(h)
  if (mkdirSync(dirname(path), { recursive: true, mode: 0o700 }) !== undefined) openHome(h, 'ext.trust')
  // Whole or not at all: another process reads it at any moment.
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, path)
  return digest
}

// The warning for a project folder that did not load: it names the folder and the command.
export function untrustedReason(
  t: Exclude<ProjectTrust, { state: 'absent' | 'trusted' }>,
  project: string,
): string {
  const cmd = `${TRUST_COMMAND} --project ${projectKey(project)}`
  if (t.state === 'unreadable') return `project extensions not loaded: ${t.reason}`
  const what =
    t.state === 'changed'
      ? 'changed since you trusted it (a session working in this folder may have written it)'
      : 'not trusted yet'
  return (
    `project extensions in ${t.dir} NOT loaded: its content (${t.digest.files.length} files) is ${what}. ` +
    `They run on this computer outside every sandbox: review the files, then run \`${cmd}\``
  )
}

// What a command that opened a project says on stderr when the project's folder did not load:
// said every time, since the person may not run `vis ext list` to find out.
export function untrustedNotices(warnings: readonly { code?: string; reason: string }[]): string[] {
  return warnings.filter((w) => w.code === 'ext.project-untrusted').map((w) => `vis: WARNING: ${w.reason}\n`)
}
