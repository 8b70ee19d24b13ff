import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { ownValue } from '../util/own-key.js'
import { realish } from '../util/real-path.js'
import { parameterReading, type Unknown } from './shell-parameter.js'

// The local places an mcp.json env value may name, read every way the programs that get it might
// read it. A server and the tools it starts each parse a value their own way: PYTHONPATH splits at
// `:` only (a root named "my work" stays whole), perl takes `-I<dir>` with the folder attached, Node
// `--import=file:/x` (one slash, percent-encoded), npm expands `~/` and `${NAME}` in its
// configuration, a shell `$NAME` and `~/`. No one reading is
// right for all of them, so every reading is taken and each place it yields is judged: a reading
// that names no local place resolves under the server's cwd, which lies outside every root
// (launch.ts), so taking too many readings refuses nothing a person meant.

// The places named by `value`, the home-relative words no HOME resolves (`~user/...`), the
// command substitutions (`$(...)`, backticks) a shell would run to make the value: what they print
// cannot be known without running them, so the caller refuses them in a location's value; and, for
// the same reason, the parameter forms whose result this check cannot bound (each with why).
export type NamedPlaces = { paths: string[]; unresolved: string[]; commands: string[]; unbounded: string[] }

// A URL names no local place (a registry, a proxy), but file:// names its path.
const URL_IN_VALUE = /\b([a-z][a-z0-9+.-]*):\/\/([^\s"',;]*)/gi
// `${...}` (innermost first: no `$`, `{` or `}` inside) or a bare `$NAME`, `$1`, `$@`, `$$`...
const VARIABLE = /\$(?:\{([^${}]*)\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))/g
// A command substitution a shell runs: `$(` with a `)` after it, or two backticks. An unclosed one is
// a syntax error to a shell, which then runs nothing (a password `pa$(ss`word` is no command).
const COMMAND = /\$\([\s\S]*\)|`[\s\S]*`/

// `vars` is the environment the server gets (the host's inherited variables, the private HOME's,
// mcp.json's own); `hostHome` the user's own home, for `~` and $HOME too: a person who writes
// ~/proj means their home, and a tool that asks the password database (not HOME) finds that one.
export function placesIn(
  value: string,
  cwd: string,
  vars: Record<string, string | undefined>,
  hostHome: string = homedir(),
): NamedPlaces {
  // A shell sets PWD to its working directory (and OLDPWD, after a `cd`, to the one before): `cwd`,
  // the server's or a folder the args change to (folderBases), not a variable the server is not
  // given (seventeenth outsider pass: `. "$PWD/notes/env.sh"` with the cwd above a root `notes` was
  // read as /notes/env.sh). A PWD the server is given is read too: a program that is no shell keeps it.
  const here = resolve(cwd)
  const envs: Record<string, string | undefined>[] = [{ ...vars, PWD: here, OLDPWD: here }]
  if (vars.PWD !== undefined || vars.OLDPWD !== undefined)
    envs.push({ ...vars, PWD: vars.PWD ?? here, OLDPWD: vars.OLDPWD ?? here })
  if (vars.HOME !== hostHome) for (const env of [...envs]) envs.push({ ...env, HOME: hostHome })
  const paths = new Set<string>()
  const unresolved = new Set<string>()
  const unbounded = new Set<string>()
  for (const token of linkerTokens(value)) unbounded.add(token)
  for (const env of envs)
    for (const joined of continuations(value))
      for (const text of expansions(joined, env, unbounded))
        for (const word of wordsIn(text))
          for (const spelled of tildeReadings(word, env.HOME, unresolved))
            for (const p of kernelReadings(cwd, spelled)) paths.add(p)
  const commands = continuations(value).some((v) => COMMAND.test(v)) ? [value] : []
  return { paths: [...paths], unresolved: [...unresolved], commands, unbounded: [...unbounded] }
}

// The dynamic linker's own tokens (`man ld.so`, "Dynamic string tokens") in `value`: ld.so replaces
// `$ORIGIN` (the folder of the program being run, by its real path), `$LIB` and `$PLATFORM` (the
// system's library folder and platform) in LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT and its own
// `--preload`/`--library-path`. Read as shell variables they were unset, so
// `LD_PRELOAD=$ORIGIN/../work/lib/x.so` named /work/lib/x.so and <cwd>/$ORIGIN/..., while ld.so loaded
// <program's folder>/../work/lib/x.so, in a root beside the server's folder (seventeenth outsider pass).
// Which program's folder cannot be known (the server and every program it starts, each with its own),
// so the tokens are refused as forms this check cannot compute, in any value, even when the server is
// given a variable of that name (ld.so reads the token, not the variable).
const LINKER_TOKEN = /\$(?:\{(ORIGIN|LIB|PLATFORM)\}|(ORIGIN|LIB|PLATFORM)(?![A-Za-z0-9_]))/g

function linkerTokens(value: string): string[] {
  const out = new Set<string>()
  for (const text of [value, ansiC(value), ...continuations(value)])
    for (const m of text.matchAll(LINKER_TOKEN))
      out.add(
        `${m[0]} (the dynamic linker's token for ${m[1] === 'ORIGIN' || m[2] === 'ORIGIN' ? "the running program's folder" : 'a system library folder'}, which differs for every program the server runs)`,
      )
  return [...out]
}

// The bare words of `value` (no `/`), read every way placesIn reads it, that a program may run by name:
// a shell given the args (`sh -c 'tool'`), npx, git's `core.editor`, a tool's `EDITOR=tool`. Each is
// looked up on the server's PATH by the caller (judge-word.ts), whose folders lie outside every root
// (launch.ts cleanPath) while an entry in one may be a link into a root (seventeenth outsider pass:
// `<D>/tool -> W/bin/tool`, refused as mcp.json's `command` but run by `sh -c 'tool'`).
export function programNames(value: string, vars: Record<string, string | undefined>): string[] {
  const out = new Set<string>()
  for (const joined of continuations(value))
    for (const text of expansions(joined, vars, new Set()))
      for (const word of [...wordsIn(text), ...text.split(/[\s"'`;|&<>(){}=,:$]+/)])
        if (PROGRAM_NAME.test(word) && word !== '.' && word !== '..') out.add(word)
  return [...out]
}

const PROGRAM_NAME = /^[^/\s*?[~$-][^/\s*?[]{0,254}$/

// `value` as written and, when it holds a backslash before a newline, joined as a shell joins it: sh
// removes `\<newline>` before reading anything else, inside double quotes too (POSIX 2.2.1), so less's
// `|W/wo\<newline>rk/lesspipe.sh %s` runs W/work/lesspipe.sh (sixteenth outsider pass). Inside single
// quotes the pair stays; the value as written is that reading.
function continuations(value: string): string[] {
  return value.includes('\\\n') ? [value, value.replaceAll('\\\n', '')] : [value]
}

// `spelled` resolved from `cwd` as path.resolve does (every `..` removed by text) and, when it holds
// a `..` after a folder it names, as the kernel and every program that opens the path as given (perl's
// @INC, bash's BASH_ENV, ld.so) resolve it: the folder before each `..` followed link by link first,
// so `W/tools/../../x` names W/x when W/tools is a link to W/a/b (fourteenth outsider pass). Each
// folder a `..` climbs out of is a reading too: it lies on the way, and a sandbox that writes it can
// make it a link at any time after the check, sending the `..` wherever it likes. launch.ts reads a
// PATH entry the same way (sixteenth outsider pass).
export function kernelReadings(cwd: string, spelled: string): string[] {
  const lexical = resolve(cwd, spelled)
  const segments = spelled.split('/')
  if (!segments.includes('..')) return [lexical]
  const out = [lexical]
  let physical = isAbsolute(spelled) ? '/' : resolve(cwd)
  let named = false
  for (const seg of segments) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') {
      // A `..` that climbs out of the cwd (or /) itself follows nothing the value names.
      if (named) out.push(physical)
      physical = dirname(realish(physical))
    } else {
      physical = join(physical, seg)
      named = true
    }
  }
  out.push(physical)
  return out
}

// `value` as written and with its variables replaced. A variable the server will not have is read
// both ways tools read it: kept as written (npm leaves an unknown ${NAME}) and empty (a shell, and
// npm's ${NAME?}); `$UNSET/w` then names /w, judged like any other path.
// A shell's `${NAME:-word}` (and `:=`, `:+`, `:?`, `-`, `=`, `+`, `?`) is read three more ways: as NAME's
// value, empty, and as its word, which bash substitutes when NAME is unset (BASH_ENV is expanded so
// before it is sourced: fourteenth outsider pass). Every other form bash has (`${NAME%pat}`, `#`, `##`,
// `%%`, `${NAME/a/b}`, `${NAME,,}`, `${NAME:0:3}`, `${!NAME}`, `${#NAME}`, `${NAME@U}`...) is computed
// as bash computes it from NAME's value (shell-parameter.ts; fifteenth outsider pass), with and
// without bash 5.2's `&` in a replacement; the forms whose result this check cannot bound (the
// server's arguments `$1` `$@` `$0` `$_`, arithmetic on names, `@E`, `@P`, an extended glob) are
// reported in `unbounded`, for the caller to refuse. Forms nest (`${A:-${B:-/w}}`), so the innermost
// are replaced first, again until none is left.
function expansions(
  value: string,
  env: Record<string, string | undefined>,
  unbounded: Set<string>,
): string[] {
  // bash decodes `$'\057w'` (ANSI-C quoting, also inside `${X:-...}`: extquote) and `$"..."` before
  // it reads the forms around them; a tool that expands no shell forms keeps them as written.
  const decoded = ansiC(value)
  const replace = (unknown: Unknown, amp: boolean) => {
    // `${X:=/w}` sets X for the forms after it (read as unset: the `word` reading).
    const vars = { ...env }
    let text = unknown === 'kept' ? value : decoded
    for (let round = 0; ; round++) {
      const next = text.replace(VARIABLE, (whole, braced: string | undefined, bare: string | undefined) => {
        // Own keys only (shell-parameter.ts): `$constructor` is a variable the server will not have,
        // read every way, not Object.prototype's function (whose text would hide the empty reading).
        const reading = parameterReading(braced ?? bare ?? '', whole, vars, unknown, amp)
        if ('unbounded' in reading) {
          unbounded.add(reading.unbounded)
          return whole
        }
        if (reading.assign !== undefined && ownValue(vars, reading.assign[0]) === undefined)
          vars[reading.assign[0]] = reading.assign[1]
        return reading.text
      })
      if (next === text) break
      // A form nested deeper than this is left unread, so it is refused rather than half read.
      if (round === MAX_ROUNDS) {
        unbounded.add(`${value.slice(0, 80)} (forms nested more than ${MAX_ROUNDS} deep)`)
        break
      }
      text = next
    }
    // A shell replaces every `${...}`: one left over (a `$` inside it that is no variable, `${` unclosed)
    // was not read, so it is refused rather than taken as text.
    if (unknown !== 'kept' && text.includes('${') && unbounded.size === 0)
      unbounded.add(`${value.slice(0, 80)} (a \${...} this check cannot read)`)
    return text
  }
  const out = new Set([value])
  for (const unknown of ['kept', 'empty', 'word'] as const)
    for (const amp of [true, false]) out.add(replace(unknown, amp))
  // bash's brace expansion: `/{w,x}/ssh` is /w/ssh and /x/ssh to a `bash -c` that runs the value.
  for (const text of [...out]) for (const b of braceExpansions(text, unbounded)) out.add(b)
  return [...out]
}

const MAX_ROUNDS = 64
const MAX_BRACE_WORDS = 256

// `$'...'` decoded as bash decodes it, `$"..."` as its text.
function ansiC(text: string): string {
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
  }
  return text
    .replace(/\$'((?:[^'\\]|\\[\s\S])*)'/g, (_m, body: string) =>
      body.replace(
        /\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|[\s\S])/g,
        (_e, esc: string) => {
          const c = esc[0] as string
          if (c === 'x' || c === 'u' || c === 'U')
            return String.fromCodePoint(Number.parseInt(esc.slice(1), 16) % 0x110000)
          if (/[0-7]/.test(c)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff)
          if (c === 'c' && esc.length > 1) return String.fromCharCode(esc.charCodeAt(1) & 0x1f)
          return simple[c] ?? c
        },
      ),
    )
    .replace(/\$"((?:[^"\\]|\\[\s\S])*)"/g, (_m, body: string) => body)
}

// The words bash's brace expansion makes of `text` (`{a,b}`, `{1..3}`, `{a..c}`, nested), not
// counting `${`; more than MAX_BRACE_WORDS is reported as unbounded.
function braceExpansions(text: string, unbounded: Set<string>): string[] {
  let out = [text]
  for (let guard = 0; guard < 64; guard++) {
    let changed = false
    const next: string[] = []
    for (const t of out) {
      const e = expandFirstBrace(t)
      if (e === undefined) next.push(t)
      else {
        changed = true
        next.push(...e)
      }
      if (next.length > MAX_BRACE_WORDS) {
        unbounded.add(`${text.slice(0, 80)} (a brace expansion of more than ${MAX_BRACE_WORDS} words)`)
        return [text]
      }
    }
    out = next
    if (!changed) return out
  }
  return out
}

function expandFirstBrace(t: string): string[] | undefined {
  let quote: string | undefined
  for (let i = 0; i < t.length; i++) {
    const c = t[i]
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      continue
    }
    if (c === '\\') {
      i++
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      continue
    }
    if (c !== '{' || t[i - 1] === '$') continue
    // The matching `}` and the top-level commas.
    let depth = 0
    const commas: number[] = []
    let end = -1
    for (let j = i + 1; j < t.length; j++) {
      const d = t[j]
      if (d === '\\') j++
      else if (d === '{') depth++
      else if (d === '}') {
        if (depth === 0) {
          end = j
          break
        }
        depth--
      } else if (d === ',' && depth === 0) commas.push(j)
    }
    if (end < 0) continue
    const pre = t.slice(0, i)
    const post = t.slice(end + 1)
    const body = t.slice(i + 1, end)
    if (commas.length > 0) {
      const parts: string[] = []
      let from = i + 1
      for (const k of [...commas, end]) {
        parts.push(t.slice(from, k))
        from = k + 1
      }
      return parts.map((p) => pre + p + post)
    }
    const seq = /^(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?$/.exec(body)
    if (seq !== null) {
      const [a, b] = [seq[1] as string, seq[2] as string]
      const numeric = /[0-9]/.test(a) && /[0-9]/.test(b)
      if (!numeric && (/[0-9]/.test(a) || /[0-9]/.test(b))) continue
      const from = numeric ? Number(a) : a.charCodeAt(0)
      const to = numeric ? Number(b) : b.charCodeAt(0)
      const step = Math.max(1, Math.abs(Number(seq[3] ?? 1)))
      const count = Math.floor(Math.abs(to - from) / step) + 1
      if (count > MAX_BRACE_WORDS) return new Array(MAX_BRACE_WORDS + 1).fill(t)
      const words: string[] = []
      for (let k = 0; k < count; k++) {
        const v = from + (to >= from ? k : -k) * step
        words.push(pre + (numeric ? String(v) : String.fromCharCode(v)) + post)
      }
      return words
    }
  }
  return undefined
}

// The words of a value: the whole of it, its `:`-separated parts (search paths, which may hold
// spaces), its parts split at whitespace, quotes, `=`, `,` and `;` (options and lists) and at a
// shell's control characters `|`, `&`, `<`, `>`, `(`, `)` (a command line a tool runs with `sh -c`;
// less's input preprocessor `LESSOPEN="|W/lesspipe.sh %s"`, `||`, `|-`; a URL's `?a=/x&host=/w`;
// fifteenth outsider pass), and an option's attached argument (`-I/w/lib`, `--require=/w/x.js`) or a
// path glued to a flag (`-/w/x`). Each with URLs read as above.
function wordsIn(value: string): string[] {
  const out = new Set<string>()
  const stripped = value.replace(URL_IN_VALUE, (_m, scheme: string, tail: string) => {
    if (scheme.toLowerCase() === 'file') {
      const at = tail.indexOf('/')
      if (at >= 0) out.add(safeDecode(tail.slice(at)))
    }
    return ' '
  })
  for (const text of [value, stripped]) {
    const parts = [
      text,
      ...text.split(':'),
      ...text.split(/[\s:=,;"'|&<>()]+/),
      ...text.split(/[\s=,;"'|&<>()]+/),
      ...text.split(/[|&;<>()]+/),
    ]
    for (const w of shellWords(text))
      parts.push(w, ...w.split(':'), ...w.split('='), w.slice(w.indexOf('=') + 1), ...w.split(/[|&;<>()]+/))
    for (const p of parts) {
      const t = p.trim()
      if (t === '') continue
      if (!t.startsWith('-')) out.add(t)
      else {
        if (/^-[A-Za-z]./.test(t)) out.add(t.slice(2))
        // less's `|-` (LESSOPEN="|-W/lesspipe %s"): a flag glued to the program's path.
        out.add(t.replace(/^-+/, ''))
      }
    }
  }
  // A file URL in any spelling Node and WHATWG accept (`file:/x`, `file:///x`, `file://host/x`), and
  // every word percent-decoded as such a URL's path is: `my%20work` is the root "my work".
  for (const w of [...out]) {
    const file = /^file:(?:\/\/[^/]*)?(\/.*)$/i.exec(w)
    if (file?.[1] !== undefined) out.add(file[1])
  }
  for (const w of [...out]) out.add(safeDecode(w))
  // A java `@argfile` (JDK_JAVA_OPTIONS, JAVA_TOOL_OPTIONS' launcher, javac, gcc, curl's `-d @file`):
  // the file whose words the program reads as its options; attached to an option too (`-J@/w/x`,
  // `--data=@/w/x`), which the option split above has already cut off.
  for (const w of [...out]) if (w.startsWith('@') && w.length > 1) out.add(w.slice(1))
  // A dotted name is also a module path: `python3 -m notes.server` runs <sys.path entry>/notes/server.py
  // (with `-m` the cwd is sys.path[0]) after notes/__init__.py, and `uvicorn notes.app:app`,
  // `FLASK_APP=notes.server` likewise; read as a file, `notes.server` named no root `notes`
  // (seventeenth outsider pass). So each dotted prefix, dots made `/`, is a reading of its own.
  for (const w of [...out])
    if (DOTTED.test(w)) {
      const parts = w.split('.')
      for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('/'))
    }
  return [...out]
}

const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/

// The words a shell (and Node's NODE_OPTIONS parser) makes of `text`: split at unquoted whitespace,
// quotes and backslash escapes removed, so `--require "/w/my work/x.js"` and `/w/my\ work` keep
// their spaces.
function shellWords(text: string): string[] {
  const words: string[] = []
  let word: string | undefined
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i] as string
      else word += c
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word)
      word = undefined
    } else {
      word ??= ''
      if (c === '"' || c === "'") quote = c
      else if (c === '\\' && i + 1 < text.length) word += text[++i] as string
      else word += c
    }
  }
  if (word !== undefined) words.push(word)
  return words
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

// A word as written and, when it starts with `~`, with its home: `~` and `~/x` are HOME's; `~user`
// is some user's home this check cannot locate without the password database, so it is reported
// (the caller refuses it) rather than guessed.
function tildeReadings(word: string, home: string | undefined, unresolved: Set<string>): string[] {
  if (!word.startsWith('~')) return [word]
  if (word === '~' || word.startsWith('~/')) return home ? [word, home + word.slice(1)] : [word]
  unresolved.add(word)
  return [word]
}
