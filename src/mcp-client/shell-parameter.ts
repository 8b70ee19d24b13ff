import { ownValue } from '../util/own-key.js'

// One shell parameter expansion `${...}` (bash's forms), computed from the environment the server
// gets, as bash computes it when it expands BASH_ENV (or a shell runs a command a tool reads from a
// variable). A form whose result depends on what vis cannot know before the shell runs (the server's
// arguments, arithmetic on names, escape or prompt expansion, an extended glob) is reported
// `unbounded`, for the caller to refuse like a command substitution (fifteenth outsider pass:
// `${WORKSPACE%/}/x.sh` was read as a variable named `WORKSPACE%/`, empty, and bash sourced
// WORKSPACE's x.sh).

export type Unknown = 'kept' | 'empty' | 'word'
// `assign`: `${NAME=word}` and `${NAME:=word}` set NAME, for the forms after it, when it is unset.
export type Reading = { text: string; assign?: [string, string] } | { unbounded: string }

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/
// `$$`, `$?`, `$#`, `$!`, `$-`: a number or the shell's flags, never a path separator.
const SPECIAL = /^[$?#!-]/
// The server's arguments ($0 is its script or -c name) and `$_` (the path it was started by): a
// data folder in a root may be an argument (SECURITY.md: data folders go in `args`).
const POSITIONAL = /^(?:[0-9]+|[@*])/
// Variables a shell sets itself to a number, a host or platform name or a separator, never a path, read
// (given or not) as before: as written and empty.
const NO_PATH_VARS = new Set([
  'RANDOM',
  'SRANDOM',
  'SECONDS',
  'EPOCHSECONDS',
  'EPOCHREALTIME',
  'LINENO',
  'BASHPID',
  'PPID',
  'UID',
  'EUID',
  'SHLVL',
  'HOSTNAME',
  'HOSTTYPE',
  'OSTYPE',
  'MACHTYPE',
  'BASH_VERSION',
  'BASH_SUBSHELL',
  'HISTCMD',
  'IFS',
  'OPTIND',
  'COLUMNS',
  'LINES',
])

// Why `${NAME}` of a variable the server is not given is refused, and what to write instead.
function notGiven(name: string): string {
  return (
    `${name} is no variable the server is given: a login shell's profile or the program itself may set it ` +
    `to any folder; give ${name} in mcp.json's env, or write the path itself`
  )
}
const DEFAULT_OP = /^(:?[-=+?])([\s\S]*)$/
const INTEGER = /^\s*\(?\s*([-+]?)\s*([0-9]+)\s*\)?\s*$/

// `inside` is the text between `${` and `}`; `whole` the form as written (kept as is by a tool that
// does not expand it); `amp`: bash 5.2's patsub_replacement, where `&` in a replacement is the match.
export function parameterReading(
  inside: string,
  whole: string,
  env: Record<string, string | undefined>,
  unknown: Unknown,
  amp: boolean,
): Reading {
  const unbounded = (why: string): Reading => ({ unbounded: `${whole} (${why})` })
  let s = inside
  // ${#NAME}: a length, digits only.
  if (s.length > 1 && s.startsWith('#') && /^#([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])$/.test(s)) {
    const v = ownValue(env, s.slice(1))
    return { text: String(v?.length ?? 0) }
  }
  let indirect = false
  if (s.startsWith('!') && s.length > 1) {
    const rest = s.slice(1)
    // ${!prefix*}, ${!prefix@}: the names of variables, never a path separator.
    const names = /^([A-Za-z_][A-Za-z0-9_]*)[*@]$/.exec(rest)
    if (names?.[1] !== undefined)
      return {
        text: Object.keys(env)
          .filter((k) => k.startsWith(names[1] as string))
          .join(' '),
      }
    if (/^[A-Za-z_][A-Za-z0-9_]*\[[@*]\]$/.test(rest)) return { text: '0' }
    indirect = true
    s = rest
  }
  const head = NAME.exec(s)?.[0] ?? POSITIONAL.exec(s)?.[0] ?? SPECIAL.exec(s)?.[0]
  if (head === undefined) return unbounded('not a parameter bash expands')
  let op = s.slice(head.length)
  if (POSITIONAL.test(head) || head === '_')
    return unbounded("the server's arguments, which this check does not see")
  // A variable the server is not given has a value this check cannot know (seventeenth outsider pass):
  // a login shell (`bash -lc`, as mcp.json guides start servers for nvm's PATH) exports what the
  // person's ~/.profile sets (`WORK=$HOME/work`), and a program sets its own; read as unset (empty, or
  // kept as written) `. "$WORK/mcp/env.sh"` named /mcp/env.sh while bash sourced W/mcp/env.sh. So it
  // is refused as a form this check cannot compute, every form of it (`${WORK:-/x}`, `${WORK%/}`) too,
  // except the shell's own variables whose values are no path (NO_PATH_VARS).
  if (!SPECIAL.test(head) && ownValue(env, head) === undefined && !NO_PATH_VARS.has(head))
    return unbounded(notGiven(head))
  let value = SPECIAL.test(head) ? undefined : ownValue(env, head)
  // An environment variable is a scalar: [0], [@] and [*] are its value, another index nothing; an
  // index that is not a number is arithmetic on names.
  const sub = /^\[([^\]]*)\]/.exec(op)
  if (sub !== undefined && sub !== null) {
    const index = sub[1] ?? ''
    if (/^\s*0*\s*$/.test(index) && index.trim() !== '') {
      // [0] (and [00]): the value.
    } else if (index === '@' || index === '*') {
      // the value
    } else if (/^\s*[0-9]+\s*$/.test(index)) value = undefined
    else return unbounded('an array index bash computes by arithmetic')
    op = op.slice(sub[0].length)
  }
  if (indirect) {
    if (value !== undefined) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(value) && value !== '_') {
        const target = value
        value = ownValue(env, target)
        if (value === undefined && !NO_PATH_VARS.has(target)) return unbounded(notGiven(target))
      } else
        return unbounded(`an indirection through ${head}, whose value ${value} is no plain variable name`)
    }
  }
  const known = value !== undefined
  const base = value ?? ''
  const transform = (f: (v: string) => Reading): Reading =>
    !known && unknown === 'kept' ? { text: whole } : f(base)
  const matched = (f: (v: string) => Reading): Reading =>
    base.length > MAX_MATCHED
      ? unbounded(`a pattern matched against a value over ${MAX_MATCHED} characters`)
      : transform(f)
  if (op === '') return known ? { text: base } : { text: unknown === 'kept' ? whole : '' }
  const dflt = DEFAULT_OP.exec(op)
  if (dflt !== null) {
    if (unknown === 'word') {
      const word = dflt[2] ?? ''
      const sets = (dflt[1] === '=' || dflt[1] === ':=') && !indirect && NAME.test(head)
      return sets ? { text: word, assign: [head, word] } : { text: word }
    }
    return known ? { text: base } : { text: unknown === 'kept' ? whole : '' }
  }
  // ${X#p} ${X##p} ${X%p} ${X%%p}: a prefix or suffix removed, shortest or longest match.
  const strip = /^(##?|%%?)([\s\S]*)$/.exec(op)
  if (strip !== null) {
    const kind = strip[1] as string
    const match = globMatcher(strip[2] ?? '')
    if (match === undefined) return unbounded('a pattern this check cannot match as bash does')
    return matched((v) => ({ text: removeMatch(v, kind, match) }))
  }
  // ${X/p/r} ${X//p/r} ${X/#p/r} ${X/%p/r}
  const subst = /^\/([/#%]?)([\s\S]*)$/.exec(op)
  if (subst !== null) {
    const [pattern, replacement] = splitReplacement(subst[2] ?? '')
    const match = globMatcher(pattern)
    if (match === undefined) return unbounded('a pattern this check cannot match as bash does')
    return matched((v) => ({ text: substitute(v, subst[1] ?? '', match, replacement, amp) }))
  }
  // ${X^p} ${X^^p} ${X,p} ${X,,p}: case changed in the characters matching p (any, without p).
  const kase = /^(\^\^?|,,?)([\s\S]*)$/.exec(op)
  if (kase !== null) {
    const kind = kase[1] as string
    const match = globMatcher(kase[2] === '' ? '?' : (kase[2] ?? '?'))
    if (match === undefined) return unbounded('a pattern this check cannot match as bash does')
    const change = (c: string) => (match(c) ? (kind.startsWith('^') ? c.toUpperCase() : c.toLowerCase()) : c)
    return transform((v) => {
      const chars = [...v]
      return { text: chars.map((c, i) => (kind.length === 2 || i === 0 ? change(c) : c)).join('') }
    })
  }
  // ${X@op}: U, u, L change case, Q quotes (a shell word of the same text), a is an attribute letter;
  // E expands backslash escapes and P prompt sequences (\w, and a value's own $(...)), A and K write a
  // declaration: not read here.
  const at = /^@([A-Za-z])$/.exec(op)
  if (at !== null) {
    const o = at[1] as string
    if (o === 'U') return transform((v) => ({ text: v.toUpperCase() }))
    if (o === 'L') return transform((v) => ({ text: v.toLowerCase() }))
    if (o === 'u') return transform((v) => ({ text: v.charAt(0).toUpperCase() + v.slice(1) }))
    if (o === 'Q') return transform((v) => ({ text: `'${v.replaceAll("'", `'\\''`)}'` }))
    if (o === 'a') return { text: known ? 'x' : '' }
    return unbounded(`the @${o} transformation`)
  }
  // ${X:offset} ${X:offset:length}, with literal numbers; arithmetic on names is not computed here.
  if (op.startsWith(':')) {
    const parts = op.slice(1).split(':')
    if (parts.length > 2) return unbounded('a substring whose bounds are no literal numbers')
    const nums = parts.map((p) => INTEGER.exec(p))
    if (nums.some((n) => n === null)) return unbounded('a substring whose bounds are no literal numbers')
    const num = (m: RegExpExecArray | null) => (m?.[1] === '-' ? -1 : 1) * Number(m?.[2] ?? 0)
    return transform((v) => ({
      text: substring(v, num(nums[0] ?? null), nums[1] ? num(nums[1]) : undefined),
    }))
  }
  return unbounded('a form this check does not read')
}

function substring(v: string, offset: number, length: number | undefined): string {
  const chars = [...v]
  const start = offset < 0 ? chars.length + offset : offset
  if (start < 0 || start > chars.length) return ''
  if (length === undefined) return chars.slice(start).join('')
  const end = length < 0 ? chars.length + length : start + length
  return end <= start ? '' : chars.slice(start, end).join('')
}

function removeMatch(v: string, kind: string, match: (s: string) => boolean): string {
  const n = v.length
  if (kind === '#') {
    for (let j = 0; j <= n; j++) if (match(v.slice(0, j))) return v.slice(j)
  } else if (kind === '##') {
    for (let j = n; j >= 0; j--) if (match(v.slice(0, j))) return v.slice(j)
  } else if (kind === '%') {
    for (let i = n; i >= 0; i--) if (match(v.slice(i))) return v.slice(0, i)
  } else {
    for (let i = 0; i <= n; i++) if (match(v.slice(i))) return v.slice(0, i)
  }
  return v
}

// The pattern and the replacement of `${X/p/r}`: split at the first unquoted, unescaped `/`.
function splitReplacement(text: string): [string, string | undefined] {
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else if (c === '\\' && quote === '"') i++
    } else if (c === '\\') i++
    else if (c === '"' || c === "'") quote = c
    else if (c === '/') return [text.slice(0, i), text.slice(i + 1)]
  }
  return [text, undefined]
}

// bash's substitution: the longest match at the leftmost place; `&` in the replacement (bash 5.2's
// patsub_replacement) is the matched text, `\&` a literal `&`.
function substitute(
  v: string,
  anchor: string,
  match: Matcher,
  replacement: string | undefined,
  amp: boolean,
): string {
  const rep = (m: string) => {
    const r = replacement ?? ''
    let out = ''
    let quote: string | undefined
    for (let i = 0; i < r.length; i++) {
      const c = r[i] as string
      if (quote !== undefined) {
        if (c === quote) quote = undefined
        else out += c
      } else if (c === '\\' && i + 1 < r.length) out += r[++i]
      else if (c === '"' || c === "'") quote = c
      else if (c === '&' && amp) out += m
      else out += c
    }
    return out
  }
  const n = v.length
  if (anchor === '#') {
    for (let j = n; j >= 0; j--) if (match(v.slice(0, j))) return rep(v.slice(0, j)) + v.slice(j)
    return v
  }
  if (anchor === '%') {
    for (let i = 0; i <= n; i++) if (match(v.slice(i))) return v.slice(0, i) + rep(v.slice(i))
    return v
  }
  let out = ''
  let i = 0
  while (i <= n) {
    let found = -1
    if (match.startsAt === undefined || match.startsAt(v.slice(i)))
      for (let j = n; j > i; j--)
        if (match(v.slice(i, j))) {
          found = j
          break
        }
    if (found < 0) {
      if (i < n) out += v[i]
      i++
      continue
    }
    out += rep(v.slice(i, found))
    i = found
    if (anchor !== '/') return out + v.slice(i)
  }
  return out
}

const MAX_STARS = 4
// Matching a pattern at every place of a value costs its length squared; a longer value is no path.
const MAX_MATCHED = 512

const CLASSES: Record<string, string> = {
  alpha: 'A-Za-z',
  digit: '0-9',
  alnum: 'A-Za-z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\s',
  blank: ' \\t',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  word: 'A-Za-z0-9_',
}

// A bash pattern (`*`, `?`, `[...]`, quotes and backslashes literal) as a whole-string test, or
// undefined for what this does not translate (an extended glob, an unknown class).
export type Matcher = ((s: string) => boolean) & { startsAt?: (s: string) => boolean }

export function globMatcher(pattern: string): Matcher | undefined {
  // Each `*` multiplies the backtracking of the whole-string test; a pattern with more is no path
  // anyone writes, and is reported rather than matched for minutes.
  if ((pattern.match(/\*/g)?.length ?? 0) > MAX_STARS) return undefined
  let re = ''
  const lit = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string
    const next = pattern[i + 1]
    if ('?*+@!'.includes(c) && next === '(') return undefined
    if (c === '\\') {
      if (i + 1 < pattern.length) re += lit(pattern[++i] as string)
      else re += '\\\\'
    } else if (c === "'") {
      const end = pattern.indexOf("'", i + 1)
      if (end < 0) return undefined
      re += lit(pattern.slice(i + 1, end))
      i = end
    } else if (c === '"') {
      let j = i + 1
      let text = ''
      for (; j < pattern.length && pattern[j] !== '"'; j++) {
        if (pattern[j] === '\\' && j + 1 < pattern.length) j++
        text += pattern[j]
      }
      if (j >= pattern.length) return undefined
      re += lit(text)
      i = j
    } else if (c === '*') re += '[\\s\\S]*'
    else if (c === '?') re += '[\\s\\S]'
    else if (c === '[') {
      const bracket = translateBracket(pattern, i)
      if (bracket === null) return undefined
      if (bracket === undefined) re += '\\['
      else {
        re += bracket.re
        i = bracket.end
      }
    } else re += lit(c)
  }
  let compiled: RegExp
  let prefix: RegExp
  try {
    compiled = new RegExp(`^${re}$`)
    prefix = new RegExp(`^${re}`)
  } catch {
    return undefined
  }
  // `startsAt(s)`: whether some match is a prefix of s (one test before trying each length).
  return Object.assign((s: string) => compiled.test(s), { startsAt: (s: string) => prefix.test(s) })
}

// `[...]` from `pattern[at]`: its regex and the index of its `]`; undefined when unclosed (bash
// takes the `[` literally), null when it holds a class this does not know.
function translateBracket(pattern: string, at: number): { re: string; end: number } | undefined | null {
  let i = at + 1
  let negate = false
  if (pattern[i] === '!' || pattern[i] === '^') {
    negate = true
    i++
  }
  let body = ''
  let first = true
  for (; i < pattern.length; i++) {
    const c = pattern[i] as string
    if (c === ']' && !first) return { re: `[${negate ? '^' : ''}${body}]`, end: i }
    first = false
    if (c === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2)
      if (end < 0) return null
      const cls = CLASSES[pattern.slice(i + 2, end)]
      if (cls === undefined) return null
      body += cls
      i = end + 1
    } else if (c === '[' && (pattern[i + 1] === '=' || pattern[i + 1] === '.')) return null
    else if (c === '\\' && i + 1 < pattern.length) body += `\\${pattern[++i]}`
    else if (c === '-') body += '-'
    else body += c.replace(/[\\^\]]/g, '\\$&')
  }
  return undefined
}
