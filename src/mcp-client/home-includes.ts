import { closeSync, constants, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { realish } from '../util/real-path.js'
import { placesIn } from './env-spellings.js'

// What HOME's configuration files NAME, read by their content (seventeenth outsider pass). The HOME
// walk (tool-home.ts) judges links; the other way dotfiles are kept in a folder is a plain file in HOME
// that names one there: `~/.bash_profile` holding `. ~/dotfiles/bash_profile`, `~/.gitconfig` holding
// `[include] path = ~/dotfiles/gitconfig`, a user-site `.pth` naming `~/proj/src` (an editable install).
// With a session on that folder a block rewrites the named file and the host's `bash -l`, git or python
// runs it. Only the files that run code by design, in the forms those programs read, are read here:
// git's config (every value, and `[include]`/`[includeIf]` paths followed), the shells' start files
// (every word, and `.`/`source` files followed), Python's user-site `.pth` lines, OpenSSH's config (every
// value, `Include` followed). Other programs' include forms (vim's `source`, tmux's `source-file`,
// Emacs's `load`...) are not read: SECURITY.md says so, and what a person does about it.

// Why a named place is, lies in or leads into a root, if it does (tool-home.ts).
export type JudgePlace = (path: string) => string | undefined

// The bounds of the reading, which runs at a server's start and again when the roots change: a file
// past MAX_BYTES or a count of files past MAX_FILES is not read, and HOME is judged unfit (what was not
// read may name a root).
const MAX_BYTES = 256 * 1024
const MAX_FILES = 200
// git stops at 10 nested includes; a shell's nesting is bounded the same way here.
const MAX_DEPTH = 10

const SHELL_FILES = [
  '.profile',
  '.bash_profile',
  '.bash_login',
  '.bashrc',
  '.bash_logout',
  '.bash_aliases',
  '.zshenv',
  '.zprofile',
  '.zshrc',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.mkshrc',
  '.shrc',
  '.cshrc',
  '.tcshrc',
  '.login',
]

class Reader {
  files = 0
  readonly seen = new Set<string>()
  readonly vars: Record<string, string | undefined>
  constructor(
    readonly home: string,
    readonly judge: JudgePlace,
  ) {
    this.vars = { ...process.env, HOME: home }
  }

  // The text of `path` when it is a regular file not read before (by real path), undefined when it is
  // none; throws Unfit past the bounds.
  text(path: string): string | undefined {
    const real = realish(path)
    if (this.seen.has(real)) return undefined
    let size: number
    try {
      const st = statSync(path)
      if (!st.isFile()) return undefined
      size = st.size
    } catch {
      return undefined
    }
    this.seen.add(real)
    if (++this.files > MAX_FILES)
      throw new Unfit(
        `HOME's configuration names more than ${MAX_FILES} files (${path} and after were not read)`,
      )
    if (size > MAX_BYTES) throw new Unfit(`${path} is larger than ${MAX_BYTES} bytes and was not read`)
    try {
      // Non-blocking: a file swapped for a FIFO after the stat does not hang the judgement.
      const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const buf = Buffer.alloc(MAX_BYTES + 1)
        const n = readSync(fd, buf, 0, buf.length, 0)
        if (n > MAX_BYTES) throw new Unfit(`${path} is larger than ${MAX_BYTES} bytes and was not read`)
        return buf.subarray(0, n).toString('utf8')
      } finally {
        closeSync(fd)
      }
    } catch (err) {
      if (err instanceof Unfit) throw err
      return undefined
    }
  }

  // The places `words` names, read every way a shell, git or npm reads a path (env-spellings.ts), from
  // `cwd`; a named place in a root makes HOME unfit.
  places(words: string, cwd: string, file: string): string[] {
    const named = placesIn(words, cwd, this.vars, this.home)
    for (const p of named.paths) {
      const why = this.judge(p)
      if (why !== undefined) throw new Unfit(`${file} names ${p}: ${why}`)
    }
    return named.paths
  }
}

class Unfit extends Error {}

// Why HOME's configuration names a place in a root, if it does.
export function includesInRoot(home: string, judge: JudgePlace): string | undefined {
  const r = new Reader(home, judge)
  try {
    for (const f of SHELL_FILES) shellFile(r, join(home, f), 0)
    for (const f of [join(home, '.gitconfig'), join(home, '.config', 'git', 'config')]) gitFile(r, f, 0)
    userSite(r, join(home, '.local', 'lib'))
    sshFile(r, join(home, '.ssh', 'config'), join(home, '.ssh'), 0)
  } catch (err) {
    if (err instanceof Unfit) return err.message
    throw err
  }
  return undefined
}

// Why the OpenSSH config in `sshDir` (the password database home's, which ssh reads whatever HOME is)
// or a file it includes names a place in a root, if it does.
export function sshIncludesInRoot(sshDir: string, home: string, judge: JudgePlace): string | undefined {
  const r = new Reader(home, judge)
  try {
    sshFile(r, join(sshDir, 'config'), sshDir, 0)
  } catch (err) {
    if (err instanceof Unfit) return err.message
    throw err
  }
  return undefined
}

// A `.` or `source` command, where a shell reads a command word (a line's start, after `;`, `&&`, `||`,
// `|`, `(`, `{`, `!` or a keyword), and the words after it up to the command's end.
const SOURCE = /(?:^|[;&|({!]|\b(?:then|do|else|elif|if|while|until|time)\b)\s*(?:\.|source)\s+([^;&|\n]+)/g

// A shell start file: every word judged (a root named anywhere: a PATH entry, a variable later sourced,
// a loop over a root's files), and the files `.`/`source` name read as shell files too, from HOME (a
// login shell's cwd).
function shellFile(r: Reader, path: string, depth: number): void {
  const text = r.text(path)
  if (text === undefined) return
  for (const raw of text.split('\n')) {
    const line = withoutComment(raw)
    if (line.trim() === '') continue
    r.places(line, r.home, path)
    if (depth >= MAX_DEPTH) continue
    for (const m of line.matchAll(SOURCE)) {
      const first = (m[1] ?? '').trim()
      for (const p of r.places(first, r.home, path)) shellFile(r, p, depth + 1)
    }
  }
}

// A shell line without its comment: `#` at a word's start outside quotes.
function withoutComment(line: string): string {
  let quote = ''
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote !== '') {
      if (c === quote) quote = ''
      else if (c === '\\' && quote === '"') i++
    } else if (c === '\\') i++
    else if (c === "'" || c === '"') quote = c
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i)
  }
  return line
}

// A git config file: every value judged (core.fsmonitor, core.hooksPath, core.sshCommand... naming a
// root's file), and `[include]`/`[includeIf "..."]` `path` values read as git config too, relative to
// the including file's folder as git reads them (every condition taken as met).
function gitFile(r: Reader, path: string, depth: number): void {
  const text = r.text(path)
  if (text === undefined) return
  let section = ''
  for (const raw of text.split('\n')) {
    let line = raw.trim()
    if (line.startsWith('[')) {
      const end = line.indexOf(']')
      const header = line.slice(1, end < 0 ? undefined : end).trim()
      section = (header.split(/[\s".]/)[0] ?? '').toLowerCase()
      line = end < 0 ? '' : line.slice(end + 1).trim()
    }
    const eq = line.indexOf('=')
    if (eq < 0) continue
    const key = line.slice(0, eq).trim().toLowerCase()
    const value = gitValue(line.slice(eq + 1))
    if (value === '') continue
    const dirs = new Set([dirname(path), dirname(realish(path))])
    for (const d of dirs) {
      const named = r.places(value, d, path)
      if ((section === 'include' || section === 'includeif') && key === 'path' && depth < MAX_DEPTH)
        for (const p of named) gitFile(r, p, depth + 1)
    }
  }
}

// A git config value: quotes removed, `\` escapes read, a `#` or `;` outside quotes ending it.
function gitValue(text: string): string {
  let out = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') quoted = !quoted
    else if (c === '\\' && i + 1 < text.length) {
      const n = text[++i]!
      out += n === 't' ? '\t' : n === 'n' ? '\n' : n
    } else if (!quoted && (c === '#' || c === ';')) break
    else out += c
  }
  return out.trim()
}

// Python's user sites (~/.local/lib/python*/site-packages): each `.pth` line is a folder put on sys.path
// at every start of a python (relative to the site), judged; an `import` line runs code that names
// what it likes, which no reading judges, so it makes HOME unfit while a root is open.
function userSite(r: Reader, lib: string): void {
  for (const v of listing(lib)) {
    if (!v.startsWith('python') && !v.startsWith('pypy')) continue
    const site = join(lib, v, 'site-packages')
    for (const f of listing(site)) {
      if (!f.endsWith('.pth')) continue
      const path = join(site, f)
      const text = r.text(path)
      if (text === undefined) continue
      for (const raw of text.split('\n')) {
        const line = raw.trimEnd()
        if (line.trim() === '' || line.startsWith('#')) continue
        if (/^import[ \t]/.test(line))
          throw new Unfit(
            `${path} runs code at every python start (an import line), which may read a session root`,
          )
        const p = resolve(site, line)
        const why = r.judge(p)
        if (why !== undefined) throw new Unfit(`${path} puts ${p} on python's path: ${why}`)
      }
    }
  }
}

// An OpenSSH config: every value judged (ProxyCommand, IdentityFile, Match exec naming a root's file),
// and `Include` files read too (relative to ~/.ssh; a pattern read as every file of its folder).
function sshFile(r: Reader, path: string, sshDir: string, depth: number): void {
  const text = r.text(path)
  if (text === undefined) return
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const named = r.places(line, sshDir, path)
    const m = /^include(?:\s*=\s*|\s+)(.*)$/i.exec(line)
    if (m === null || depth >= MAX_DEPTH) continue
    for (const p of named) {
      const glob = p.search(/[*?[]/)
      if (glob < 0) {
        sshFile(r, p, sshDir, depth + 1)
        continue
      }
      const folder = dirname(p.slice(0, glob + 1))
      const why = r.judge(folder)
      if (why !== undefined) throw new Unfit(`${path} includes files of ${folder}: ${why}`)
      for (const f of listing(folder)) {
        const file = join(folder, f)
        const whyFile = r.judge(file)
        if (whyFile !== undefined) throw new Unfit(`${path} includes ${file}: ${whyFile}`)
        sshFile(r, file, sshDir, depth + 1)
      }
    }
  }
}

function listing(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
