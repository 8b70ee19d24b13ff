import { spawn } from 'node:child_process'
import { constants as C, closeSync, fstatSync, lstatSync, statSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { createInterface } from 'node:readline'
import { closeFd, openAt2, readCapped, STRICT } from '../../confinement/beneath.js'
import { checkpoint } from '../../util/check-use-hook.js'
import { VisError } from '../../util/errors.js'
import { hostProgramPath } from '../../util/host-programs.js'
import type { SpawnHook } from '../types.js'
import { ignoreReader } from './gitignore.js'
import { splitLines } from './lines.js'
import { isWithin, O_PATH, type PathGuard } from './paths.js'
import { listFiles } from './walk.js'

// The searched files are chosen the same way by both engines: hidden files
// skipped, .gitignore honoured inside a repository (no .ignore/.rgignore, no
// global excludes), symlinks not followed, files over 1 MiB and files with a
// NUL byte skipped, fixed-string terms, case folded only when asked.
export const MAX_SEARCH_FILE_BYTES = 1024 * 1024

export interface SearchTarget {
  // Verified real path, and the open handle that pins it for the search.
  abs: string
  fh: FileHandle
  dir: boolean
}

export interface SearchSpec {
  terms: string[]
  ignoreCase: boolean
  targets: SearchTarget[]
  context: number
  maxHits: number
  // Real paths of directories neither engine may list or read (the session's hidden
  // extension directories): a search of a directory above one must step around it.
  skip: readonly string[]
  // The session's tool jail (src/sessions/tool-jail.ts), where ripgrep runs when the session is
  // confined, and where each root is as the jail shows it. Unset: an unconfined session.
  jail?: SearchJail
}

export interface SearchJail {
  spawn: SpawnHook
  // Each root as the jail mounts it (the path the client named) and its real path on the host,
  // pairwise.
  roots: readonly string[]
  realRoots: readonly string[]
}

export interface FileHits {
  abs: string
  // 1-based numbers of matching lines.
  matches: number[]
  // Text of every matching or context line that was reported.
  lines: Map<number, string>
}

export interface SearchEngine {
  readonly name: 'ripgrep' | 'builtin'
  search(spec: SearchSpec, signal: AbortSignal): Promise<{ files: FileHits[]; capped: boolean }>
  files(spec: SearchSpec, signal: AbortSignal): Promise<string[]>
}

// Compares paths component by component, i.e. each directory's entries in name order.
export function comparePaths(a: string, b: string): number {
  const x = a.split(sep)
  const y = b.split(sep)
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1
  }
  return x.length - y.length
}

export function lineMatches(line: string, terms: string[], ignoreCase: boolean): boolean {
  const hay = ignoreCase ? line.toLowerCase() : line
  return terms.some((t) => hay.includes(ignoreCase ? t.toLowerCase() : t))
}

// --- the in-process engine -------------------------------------------------

export class BuiltinEngine implements SearchEngine {
  readonly name = 'builtin' as const

  constructor(private readonly guard: PathGuard) {}

  async files(spec: SearchSpec): Promise<string[]> {
    const out: string[] = []
    for (const t of spec.targets) {
      if (!t.dir) out.push(t.abs)
      else {
        // Like ripgrep, ignore files in every parent directory count.
        out.push(
          ...(await listFiles(
            t.fh,
            t.abs,
            {
              hidden: false,
              gitignore: true,
              limit: sep,
              skip: spec.skip,
              ignoreFiles: ignoreReader(this.guard),
            },
            200_000,
          )),
        )
      }
    }
    return out
  }

  async search(spec: SearchSpec, signal: AbortSignal): Promise<{ files: FileHits[]; capped: boolean }> {
    const files: FileHits[] = []
    let hits = 0
    for (const abs of await this.files(spec)) {
      if (signal.aborted) throw new VisError('tool.aborted', 'grep: the call was cancelled', { op: 'grep' })
      const text = await this.readSearchable(abs)
      if (text === undefined) continue
      const lines = splitLines(text).lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
      const matches: number[] = []
      lines.forEach((l, i) => {
        if (lineMatches(l, spec.terms, spec.ignoreCase)) matches.push(i + 1)
      })
      if (matches.length === 0) continue
      const shown = new Map<number, string>()
      for (const m of matches) {
        for (let k = Math.max(1, m - spec.context); k <= Math.min(lines.length, m + spec.context); k++) {
          shown.set(k, lines[k - 1]!)
        }
      }
      // Stop exactly at the cap, as the ripgrep engine does.
      const keep = matches.slice(0, spec.maxHits - hits)
      files.push({ abs, matches: keep, lines: shown })
      hits += keep.length
      if (hits >= spec.maxHits) return { files, capped: true }
    }
    return { files, capped: false }
  }

  private async readSearchable(abs: string): Promise<string | undefined> {
    let fh: FileHandle | undefined
    try {
      fh = (await this.guard.open(abs, 'grep', C.O_RDONLY | C.O_NOFOLLOW)).fh
      const st = await fh.stat()
      if (!st.isFile() || st.size > MAX_SEARCH_FILE_BYTES) return undefined
      const { data: buf, over } = await readCapped(fh.fd, MAX_SEARCH_FILE_BYTES)
      if (over || buf.includes(0)) return undefined
      return buf.toString('utf8')
    } catch {
      return undefined
    } finally {
      await fh?.close()
    }
  }
}

// --- ripgrep ---------------------------------------------------------------

// ripgrep walks below each verified target by name, so a directory swapped for a link while
// it walks would lead it outside the roots. What it reports is therefore only a list of
// candidates: each file is opened again beneath its target's verified handle with no link
// on the way (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), and the lines shown, and which of
// them match, come from that file. A file that cannot be reached that way is dropped.
function openBelowTarget(spec: SearchSpec, abs: string, flags: number): number | undefined {
  const t = spec.targets.find((x) => x.abs === abs || (x.dir && isWithin(abs, x.abs)))
  if (!t) return undefined
  const rel = abs === t.abs ? '' : abs.slice(t.abs === sep ? 1 : t.abs.length + 1)
  try {
    // A file target: the verified handle's own file, re-opened through its fd link.
    if (rel === '') return openAt2(-100 /* AT_FDCWD */, `/proc/self/fd/${t.fh.fd}`, flags & ~C.O_NOFOLLOW, 0)
    return openAt2(t.fh.fd, rel, flags, STRICT)
  } catch {
    return undefined
  }
}

async function confirmed(spec: SearchSpec, files: FileHits[]): Promise<FileHits[]> {
  const out: FileHits[] = []
  for (const f of files) {
    await checkpoint('grep.confirm', f.abs)
    const fd = openBelowTarget(spec, f.abs, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK)
    if (fd === undefined) continue
    let text: string
    try {
      // Past the size ripgrep was told to search, as ripgrep itself skips it.
      const { data: buf, over } = await readCapped(fd, MAX_SEARCH_FILE_BYTES)
      if (over || buf.includes(0)) continue
      text = buf.toString('utf8')
    } finally {
      await closeFd(fd)
    }
    const lines = splitLines(text).lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
    const matches = f.matches.filter(
      (n) => lines[n - 1] !== undefined && lineMatches(lines[n - 1]!, spec.terms, spec.ignoreCase),
    )
    if (matches.length === 0) continue
    const shown = new Map<number, string>()
    for (const n of f.lines.keys()) if (lines[n - 1] !== undefined) shown.set(n, lines[n - 1]!)
    out.push({ abs: f.abs, matches, lines: shown })
  }
  return out
}

// Finds `rg` in the trusted system directories (util/host-programs.ts), never on PATH: the
// host-side search runs it unjailed, and a PATH led by a directory in a root would run a planted one.
export function findRipgrep(): string | undefined {
  return hostProgramPath('rg')
}

// A path as a literal ripgrep glob.
function globEscape(path: string): string {
  return path.replace(/[\\*?[\]{}!]/g, '\\$&')
}

// --sort path makes the walk deterministic, so a capped search keeps the same hits as the fallback.
const RG_COMMON = ['--no-config', '--no-ignore-dot', '--no-ignore-global', '--no-messages', '--sort', 'path']

type RgText = { text?: string; bytes?: string }

function rgText(t: RgText | undefined): string {
  if (!t) return ''
  if (t.text !== undefined) return t.text
  return Buffer.from(t.bytes ?? '', 'base64').toString('utf8')
}

// A verified real path as the jail shows it: below the innermost real root that holds it.
function jailPath(jail: SearchJail, abs: string): string | undefined {
  let best = -1
  jail.realRoots.forEach((r, i) => {
    if (isWithin(abs, r) && (best < 0 || r.length > jail.realRoots[best]!.length)) best = i
  })
  if (best < 0) return undefined
  const real = jail.realRoots[best]!
  return jail.roots[best]! + abs.slice(real.length)
}

// Inside the roots without following a link (the sandbox makes those); above them, by name.
const kind = (p: string, follow = true): 'file' | 'dir' | undefined => {
  try {
    const st = follow ? statSync(p) : lstatSync(p)
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : undefined
  } catch {
    return undefined
  }
}

// An ignore file above a root, as it may be bound for ripgrep: a regular file reached beneath
// `dir` with no symlink on the way or at the end. A directory above a root may be another
// session's root, whose sandbox makes its .gitignore a link to a host file (bubblewrap would
// bind the target: its lines would become the victim's rules).
function regularBeneath(dir: string, rel: string): boolean {
  const fds: number[] = []
  try {
    fds.push(openAt2(-100 /* AT_FDCWD */, dir, O_PATH | C.O_DIRECTORY, 0))
    fds.push(openAt2(fds[0]!, rel, O_PATH | C.O_NOFOLLOW, STRICT))
    return fstatSync(fds[1]!).isFile()
  } catch {
    return false
  } finally {
    for (const fd of fds) closeSync(fd)
  }
}

// A root inside a repository whose .git lies above it: the ignore files above the root count
// (as the in-process engine reads them, gitignore.ts), but the jail
// shows nothing above the roots. These are the host files that make ripgrep see the same rules
// there, bound read-only: each .gitignore from the root's parent up to the repository, its
// .git/info/exclude, and one file inside .git so that ripgrep finds the repository at all.
function ignoreFilesAbove(jail: SearchJail, targets: readonly SearchTarget[]): string[] {
  const out = new Set<string>()
  const inRoots = (p: string) => jail.realRoots.some((r) => isWithin(p, r))
  for (const t of targets) {
    if (!t.dir) continue
    const i = jail.realRoots.findIndex((r) => isWithin(t.abs, r))
    const real = jail.realRoots[i]
    // A root reached through a link is mounted at another path than its parents': not followed.
    if (real === undefined || jail.roots[i] !== real) continue
    let inside = false
    for (let d = t.abs; isWithin(d, real); d = dirname(d)) {
      if (kind(join(d, '.git'), false)) inside = true
      if (inside || d === real) break
    }
    if (inside) continue
    const found: string[] = []
    for (let d = dirname(real); ; d = dirname(d)) {
      const git = join(d, '.git')
      const gitKind = kind(git, !inRoots(d))
      if (!inRoots(d)) {
        if (regularBeneath(d, '.gitignore')) found.push(join(d, '.gitignore'))
        if (gitKind === 'file') found.push(git)
        if (gitKind === 'dir') {
          const exclude = join(git, 'info', 'exclude')
          found.push(regularBeneath(d, '.git/info/exclude') ? exclude : join(git, 'HEAD'))
        }
      }
      if (gitKind) {
        for (const f of found) if (kind(f) === 'file') out.add(f)
        break
      }
      if (d === dirname(d)) break
    }
  }
  return [...out]
}

// ripgrep opens every file it walks by name and follows a symlink there, and reads the
// .gitignore files it finds the same way: a link the sandbox swaps in during the walk (or an
// in-root .gitignore that is a link to a host file) would make it read host files, and what
// it reports (which lines match, which files are ignored) would tell the sandbox about them.
// So in a confined session it runs in the session's tool jail, which holds only what the
// sandbox itself may read: any link leads to what the jail shows, never to the host's files.
export class RipgrepEngine implements SearchEngine {
  readonly name = 'ripgrep' as const

  constructor(private readonly rg: string) {}

  // Unconfined, ripgrep reaches each target through this process's handle for it
  // (/proc/<pid>/fd/<n>), so it searches exactly what was verified; in the jail, at the
  // target's path there (the jail's mounts are the pinned roots). Its output paths are
  // mapped back to the real ones.
  // Hidden directories below a target are excluded by glob (ripgrep runs with cwd `/`, so an
  // anchored glob names one exact path), and anything under them that still came back is
  // dropped by `hidden`.
  private targetArgs(spec: SearchSpec): {
    args: string[]
    excludes: string[]
    unmap: (p: string) => string
    hidden: (abs: string) => boolean
  } {
    const byProc = new Map<string, string>()
    const excludes: string[] = []
    const args = spec.targets.map((t) => {
      const inJail = spec.jail ? jailPath(spec.jail, t.abs) : undefined
      if (spec.jail && inJail === undefined) {
        throw new VisError('tool.path-denied', 'grep: a searched path is outside the roots', { op: 'grep' })
      }
      const p = inJail ?? `/proc/${process.pid}/fd/${t.fh.fd}`
      byProc.set(p, t.abs)
      if (t.dir) {
        for (const h of spec.skip) {
          if (h !== t.abs && isWithin(h, t.abs))
            excludes.push('--glob', `!${globEscape(p + h.slice(t.abs.length))}`)
        }
      }
      return p
    })
    // The longest target path a reported path lies below (targets may nest).
    const prefixes = [...byProc.keys()].sort((a, b) => b.length - a.length)
    const unmap = (p: string): string => {
      const base = prefixes.find((x) => p === x || p.startsWith(x === sep ? x : x + sep))
      return base === undefined ? p : byProc.get(base)! + p.slice(base === sep ? 0 : base.length)
    }
    const hidden = (abs: string) => spec.skip.some((h) => isWithin(abs, h))
    return { args, excludes, unmap, hidden }
  }

  private run(
    spec: SearchSpec,
    args: string[],
    signal: AbortSignal,
    onLine: (line: string) => boolean,
  ): Promise<void> {
    return spec.jail
      ? this.runJailed(spec, spec.jail, args, signal, onLine)
      : this.runOnHost(args, signal, onLine)
  }

  private async runJailed(
    spec: SearchSpec,
    jail: SearchJail,
    args: string[],
    signal: AbortSignal,
    onLine: (line: string) => boolean,
  ): Promise<void> {
    if (signal.aborted) throw new VisError('tool.aborted', 'grep: the call was cancelled', { op: 'grep' })
    // cwd `/`: the excluding globs are anchored absolute paths, as on the host.
    const proc = await jail.spawn(this.rg, args, {
      cwd: '/',
      env: {},
      stdin: 'ignore',
      readOnly: ignoreFilesAbove(jail, spec.targets),
    })
    const onAbort = () => proc.kill()
    signal.addEventListener('abort', onAbort, { once: true })
    proc.child.stderr?.resume()
    try {
      await new Promise<void>((resolve, reject) => {
        let stopped = false
        const rl = createInterface({ input: proc.child.stdout! })
        rl.on('line', (line) => {
          if (stopped) return
          if (!onLine(line)) {
            stopped = true
            proc.kill()
          }
        })
        proc.child.on('error', (err) =>
          reject(new VisError('tool.io', `grep: ripgrep failed: ${err.message}`, { op: 'grep' })),
        )
        rl.on('close', () => resolve())
      })
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
    if (signal.aborted) throw new VisError('tool.aborted', 'grep: the call was cancelled', { op: 'grep' })
  }

  private runOnHost(args: string[], signal: AbortSignal, onLine: (line: string) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.rg, args, { cwd: '/', stdio: ['ignore', 'pipe', 'ignore'], signal })
      let stopped = false
      const rl = createInterface({ input: child.stdout })
      rl.on('line', (line) => {
        if (stopped) return
        if (!onLine(line)) {
          stopped = true
          child.kill('SIGKILL')
        }
      })
      child.on('error', (err) => {
        if (signal.aborted)
          reject(new VisError('tool.aborted', 'grep: the call was cancelled', { op: 'grep' }))
        else reject(new VisError('tool.io', `grep: ripgrep failed: ${err.message}`, { op: 'grep' }))
      })
      child.on('close', () => rl.close())
      rl.on('close', () => resolve())
    })
  }

  async files(spec: SearchSpec, signal: AbortSignal): Promise<string[]> {
    const { args, excludes, unmap, hidden } = this.targetArgs(spec)
    const out: string[] = []
    await this.run(spec, ['--files', ...RG_COMMON, ...excludes, '--', ...args], signal, (line) => {
      const abs = unmap(line)
      if (!hidden(abs)) out.push(abs)
      return out.length < 200_000
    })
    const kept: string[] = []
    for (const abs of out) {
      const fd = openBelowTarget(spec, abs, O_PATH | C.O_NOFOLLOW)
      if (fd === undefined) continue
      await closeFd(fd)
      kept.push(abs)
    }
    return kept
  }

  async search(spec: SearchSpec, signal: AbortSignal): Promise<{ files: FileHits[]; capped: boolean }> {
    const { args, excludes, unmap, hidden } = this.targetArgs(spec)
    const argv = [
      '--json',
      ...RG_COMMON,
      ...excludes,
      '--fixed-strings',
      spec.ignoreCase ? '--ignore-case' : '--case-sensitive',
      '--max-filesize',
      String(MAX_SEARCH_FILE_BYTES),
      '--context',
      String(spec.context),
      ...spec.terms.flatMap((t) => ['-e', t]),
      '--',
      ...args,
    ]
    const byPath = new Map<string, FileHits>()
    let hits = 0
    let capped = false
    await this.run(spec, argv, signal, (line) => {
      let msg: { type?: string; data?: { path?: RgText; lines?: RgText; line_number?: number } }
      try {
        msg = JSON.parse(line)
      } catch {
        return true
      }
      if (msg.type !== 'match' && msg.type !== 'context') return true
      const d = msg.data!
      const abs = unmap(rgText(d.path))
      if (hidden(abs)) return true
      let f = byPath.get(abs)
      if (!f) {
        f = { abs, matches: [], lines: new Map() }
        byPath.set(abs, f)
      }
      let text = rgText(d.lines)
      if (text.endsWith('\n')) text = text.slice(0, -1)
      if (text.endsWith('\r')) text = text.slice(0, -1)
      const n = d.line_number ?? 0
      f.lines.set(n, text)
      if (msg.type === 'match') {
        f.matches.push(n)
        hits++
      }
      if (hits >= spec.maxHits) capped = true
      return !capped
    })
    const files = await confirmed(spec, [...byPath.values()])
    // A file cut off mid-way by the cap may end with context after the last match only.
    return { files, capped }
  }
}
