import { closeSync, constants, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { realish } from '../util/real-path.js'
import { placesIn } from './env-spellings.js'
import { expansionReaching, TOO_WIDE } from './judge-word.js'

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
// The session root a folder holds, if it holds one (judge-word.ts rootInside): a user-site .pth line
// naming ~/projects with a root at ~/projects/proj_tools makes `import proj_tools` the root's code.
export type HoldsRoot = (path: string) => string | undefined

// The bounds of the reading, which runs at a server's start and again when the roots change: a file
// past MAX_BYTES or a count of files past MAX_FILES is not read, and HOME is judged unfit (what was not
// read may name a root).
const MAX_BYTES = 256 * 1024
const MAX_FILES = 200
// git stops at 10 nested includes; a shell's nesting is bounded the same way here.
const MAX_DEPTH = 10
// The most values one start-file variable is read with (each assignment, each word of a `for` list, each
// file its pattern matches), and the most combinations of them one `.`/`source` operand is read with;
// past either, HOME is unfit (eighteenth outsider pass).
const MAX_VALUES = 256
const MAX_COMBINATIONS = 256

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
  // What the start files read so far assign (`me=$HOME`, `export NVM_DIR=...`, `for rc in ~/.bashrc.d/*`):
  // every value each name is given, or undefined when one of them could not be computed. A sourced file
  // runs in the same shell, so the values carry over into it, as the shell's do.
  readonly assigned = new Map<string, Set<string> | undefined>()
  constructor(
    readonly home: string,
    readonly judge: JudgePlace,
    readonly holds: HoldsRoot = () => undefined,
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
  places(words: string, cwd: string, file: string, vars = this.vars): string[] {
    const named = placesIn(words, cwd, vars, this.home)
    for (const p of named.paths) {
      const why = this.judge(p)
      if (why !== undefined) throw new Unfit(`${file} names ${p}: ${why}`)
    }
    return named.paths
  }

  // The existing paths a shell pattern (`~/dotfile[s]/bash_profile`, `~/.bashrc.d/*`) expands to, by the
  // expansion judge-word.ts gives mcp.json's words: a match whose real path lies in a root makes HOME
  // unfit; the rest are returned (the pattern itself when it holds none).
  expand(path: string, file: string): string[] {
    if (!/[*?[]/.test(path)) return [path]
    const components = path.split('/').filter((c) => c !== '')
    let last = -1
    components.forEach((c, i) => {
      if (/[*?[]/.test(c)) last = i
    })
    const matches: string[] = []
    const reached = expansionReaching(components, (real, matched) => {
      const why = this.judge(real) ?? this.judge(matched)
      if (why !== undefined) return `${matched}: ${why}`
      if (matched.split('/').length === last + 2) matches.push(matched)
      return undefined
    })
    if (reached === TOO_WIDE)
      throw new Unfit(`${file} names ${path}, a pattern matching more existing paths than are read`)
    if (reached !== undefined) throw new Unfit(`${file} names ${path}, which a shell expands to ${reached}`)
    const rest = components.slice(last + 1)
    return matches.map((m) => (rest.length === 0 ? m : `${m}/${rest.join('/')}`))
  }
}

class Unfit extends Error {}

// Why HOME's configuration names a place in a root, if it does.
export function includesInRoot(home: string, judge: JudgePlace, holds?: HoldsRoot): string | undefined {
  const r = new Reader(home, judge, holds)
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

// Why the git config file `path` (an mcp.json XDG_CONFIG_HOME's git/config, which git reads instead of
// ~/.config/git/config) or a file it includes names a place in a root, if it does; `home` is the HOME
// the server's git expands `~` with.
export function gitIncludesInRoot(path: string, home: string, judge: JudgePlace): string | undefined {
  const r = new Reader(home, judge)
  try {
    gitFile(r, path, 0)
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
// `|`, `(`, `{`, `!` or a keyword), and the words after it up to the command's end. `\.` is the same
// command (nvm's installer writes `\. "$NVM_DIR/nvm.sh"`: a quoted character stops alias expansion).
const SOURCE =
  /(?:^|[;&|({!]|\b(?:then|do|else|elif|if|while|until|time)\b)\s*(?:\\?\.|source)\s+([^;&|\n]+)/g
// An assignment where a shell reads a command word (`me=$HOME`, `export NVM_DIR="$HOME/.nvm"`,
// `local d=~/x`), and its value up to the first unquoted blank.
const ASSIGNMENT =
  /(?:^|[;&|({!]|\b(?:then|do|else|elif|if|while|until)\b)\s*(?:(?:export|local|readonly|typeset|declare)(?:\s+-[A-Za-z]+)*\s+)?([A-Za-z_][A-Za-z0-9_]*)=((?:"[^"]*"|'[^']*'|\\.|[^\s;&|)])*)/g
// A `for NAME in WORDS` loop and its list (to `;`, `do` or the line's end); `for NAME` alone (the
// positional parameters) and `for ((...))` are read as a list that cannot be computed.
const FOR = /\bfor\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+in\b([^;\n]*?)(?=;|\bdo\b|$))?/g
const VARIABLE_NAME =
  /\$(?:\{[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))/g

// A shell start file: every word judged (a root named anywhere: a PATH entry, a variable later sourced,
// a loop over a root's files), and the files `.`/`source` name read as shell files too, from HOME (a
// login shell's cwd). Read as the shell reads it (eighteenth outsider pass): `\<newline>` joined (and
// the lines as written too, a comment ending in `\` being no continuation), the file's own
// assignments and `for` lists tracked and given to the operands that use them, a pattern operand
// expanded over the host's folders; an operand built from a variable whose value no reading here
// computes (`$1`, `$(...)`, a variable set from a command) makes HOME unfit, since it may name a root.
function shellFile(r: Reader, path: string, depth: number): void {
  const text = r.text(path)
  if (text === undefined) return
  const readings = text.includes('\\\n') ? [text.replaceAll('\\\n', ''), text] : [text]
  // The file's assignments first: a function defined above an assignment sources with the value it has
  // when called, which is after the file ran (`load() { . "$DOTS/x"; }` ... `DOTS=~/w`).
  for (const reading of readings) for (const raw of reading.split('\n')) track(r, withoutComment(raw), path)
  for (const reading of readings)
    for (const raw of reading.split('\n')) {
      const line = withoutComment(raw)
      if (line.trim() === '') continue
      r.places(line, r.home, path)
      track(r, line, path)
      if (depth >= MAX_DEPTH) continue
      for (const m of line.matchAll(SOURCE)) {
        const operand = (m[1] ?? '').trim()
        for (const vars of operandVars(r, operand, path))
          for (const p of r.places(operand, r.home, path, vars))
            for (const f of r.expand(p, path)) shellFile(r, f, depth + 1)
      }
    }
}

// Records the assignments and `for` lists of `line` in r.assigned.
function track(r: Reader, line: string, file: string): void {
  for (const m of line.matchAll(ASSIGNMENT)) {
    const name = m[1] as string
    const value = shellWord(r, m[2] ?? '')
    assign(r, name, value === undefined ? undefined : [value], file)
  }
  for (const m of line.matchAll(FOR)) {
    const name = m[1] as string
    const list = m[2]
    if (list === undefined) {
      assign(r, name, undefined, file)
      continue
    }
    const values: string[] = []
    let known = true
    for (const word of shellWords(list)) {
      const value = shellWord(r, word)
      if (value === undefined) {
        known = false
        break
      }
      // A pattern is the files it matches (relative ones from HOME, a login shell's cwd); one that
      // matches nothing stays as written, as bash leaves it.
      const matched = /[*?[]/.test(value) ? r.expand(resolve(r.home, value), file) : []
      values.push(...(matched.length > 0 ? matched : [value]))
    }
    assign(r, name, known ? values : undefined, file)
  }
}

function assign(r: Reader, name: string, values: string[] | undefined, file: string): void {
  if (values === undefined || (r.assigned.has(name) && r.assigned.get(name) === undefined)) {
    r.assigned.set(name, undefined)
    return
  }
  const set = r.assigned.get(name) ?? new Set<string>()
  for (const v of values) set.add(v)
  if (set.size > MAX_VALUES)
    throw new Unfit(`${file} gives $${name} more than ${MAX_VALUES} values (not all were read)`)
  r.assigned.set(name, set)
  r.vars[name] = values.at(-1) ?? r.vars[name]
}

// The environments a `.`/`source` operand is read with: one per combination of the values the start
// files gave the variables it names (the host's own environment for the rest). A variable the files
// set to something not computed, or a special parameter, makes HOME unfit.
function operandVars(r: Reader, operand: string, file: string): Record<string, string | undefined>[] {
  if (/\$\(|`/.test(operand))
    throw new Unfit(`${file} sources ${operand}, a command's output, which may name a session root`)
  let envs: Record<string, string | undefined>[] = [r.vars]
  for (const m of operand.matchAll(VARIABLE_NAME)) {
    const name = (m[1] ?? m[2]) as string
    if (!/^[A-Za-z_]/.test(name))
      throw new Unfit(`${file} sources ${operand}, built from $${name}, whose value this reading cannot know`)
    if (!r.assigned.has(name)) continue
    const values = r.assigned.get(name)
    if (values === undefined)
      throw new Unfit(
        `${file} sources ${operand}, built from $${name}, set to a value this reading cannot compute`,
      )
    envs = envs.flatMap((env) => [...values].map((v) => ({ ...env, [name]: v })))
    if (envs.length > MAX_COMBINATIONS)
      throw new Unfit(`${file} sources ${operand}, whose variables' values are too many to read`)
  }
  return envs
}

// The words of a shell list, split at blanks outside quotes (the quotes kept).
function shellWords(text: string): string[] {
  const out: string[] = []
  let word = ''
  let quote = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote !== '') {
      if (c === quote) quote = ''
      word += c
    } else if (c === "'" || c === '"') {
      quote = c
      word += c
    } else if (c === '\\' && i + 1 < text.length) word += c + text[++i]
    else if (/\s/.test(c)) {
      if (word !== '') out.push(word)
      word = ''
    } else word += c
  }
  if (word !== '') out.push(word)
  return out
}

// A shell word's value as the shell computes it from the variables the files set and the host's
// environment: quotes removed, a leading `~` as HOME, `$NAME` and `${NAME}` replaced; undefined for any
// other form (`$(...)`, `${NAME:-x}`, `$1`, `~user`), whose value this reading does not compute.
function shellWord(r: Reader, word: string): string | undefined {
  if (/\$\(|`/.test(word)) return undefined
  let text = word
  if (text === '~' || text.startsWith('~/')) text = r.home + text.slice(1)
  else if (text.startsWith('~')) return undefined
  let unknown = false
  const replaced = text.replace(
    /\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))/g,
    (_whole, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare ?? ''
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        unknown = true
        return ''
      }
      if (r.assigned.has(name)) {
        const values = r.assigned.get(name)
        if (values === undefined || values.size !== 1) {
          unknown = true
          return ''
        }
        return [...values][0] as string
      }
      return r.vars[name] ?? ''
    },
  )
  if (unknown) return undefined
  let out = ''
  let quote = ''
  for (let i = 0; i < replaced.length; i++) {
    const c = replaced[i] as string
    if (quote !== '') {
      if (c === quote) quote = ''
      else out += c
    } else if (c === "'" || c === '"') quote = c
    else if (c === '\\' && i + 1 < replaced.length) out += replaced[++i]
    else out += c
  }
  return out
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
// the including file's folder as git reads them (every condition taken as met). git joins a value's
// `\<newline>` with the next line (`path = ~/dot\` + `files/gitconfig` is ~/dotfiles/gitconfig:
// eighteenth outsider pass), so the file is read so joined, and as written (a comment's `\` joins none).
function gitFile(r: Reader, path: string, depth: number): void {
  const text = r.text(path)
  if (text === undefined) return
  const joined = text.replace(/\\\r?\n/g, '')
  for (const reading of joined === text ? [text] : [joined, text]) gitLines(r, reading, path, depth)
}

function gitLines(r: Reader, text: string, path: string, depth: number): void {
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
// at every start of a python (relative to the site), judged, and one HOLDING a root too (python imports
// every package below it by name: `~/projects` makes the root ~/projects/proj_tools `import proj_tools`,
// the rule judge-word.ts applies to PYTHONPATH; eighteenth outsider pass); an `import` line runs code that names
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
        const held = r.holds(p)
        if (held !== undefined)
          throw new Unfit(
            `${path} puts ${p} on python's path, which holds the session root ${held} (importable by its name)`,
          )
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
