import { readdirSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, resolve } from 'node:path'
import { sandboxWrittenParts } from '../util/home-parts.js'
import { absoluteEntries, programsOn } from '../util/host-programs.js'
import { within } from '../util/path-within.js'
import { realish } from '../util/real-path.js'
import type { WritablePlaces } from '../util/writable-roots.js'
import { kernelReadings, placesIn, programNames } from './env-spellings.js'
import { inRoot } from './server-home.js'
import { globMatcher } from './shell-parameter.js'

// The one judgement of a word mcp.json hands a stdio server (an `env` value, an argument): the host
// runs the server unconfined, so no reading of the word may name a place a sandbox writes. mcp.json's
// env (server-env.ts) and args (launch.ts checkArgs) both call judgeWord, so what refuses a word in one
// refuses it in the other: until the sixteenth outsider pass the args asked only whether a reading's
// literal path lay in a root, and dropped the pattern, `~user`, `$(...)` and unbounded-form refusals
// the env had (`bash -c '. /tm?/W/tools/hook.sh'` passed while BASH_ENV=/tm?/W/tools/hook.sh did not).

// Why a word is refused. `place` and `where` name what a reading reaches.
export type WordVerdict =
  | { kind: 'command' }
  | { kind: 'unbounded'; form: string }
  | { kind: 'unresolved'; word: string }
  | { kind: 'pattern'; place: string; reaches: string }
  | { kind: 'place'; place: string; where: string }

// Whether `place` (resolved against the cwd, no link followed) is the vis home's own: its lexical
// path AND its real path lie in the home, and neither in a part of it whose bytes a sandbox chooses
// (outboxes, drafts, blobs, logs: home-parts.ts). Every jail masks the rest of the home, so such a
// place is no sandbox's even when the home lies in a root (a workspace at $HOME), and a relative
// word resolved from the default cwd (`<home>/mcp-servers`) is not taken for a root's folder. Both
// spellings, because a sandbox makes links: W/src -> <outbox> has its real path in the home
// (thirteenth outsider pass), and a link in an outbox leads anywhere.
function ownedByHome(place: string, home: string): boolean {
  const homes = [resolve(home), realish(home)]
  const real = realish(place)
  if (!homes.some((h) => within(place, h)) || !within(real, realish(home))) return false
  const written = homes.flatMap(sandboxWrittenParts)
  return !written.some((w) => within(place, w) || within(real, w))
}

// The part of the vis home a sandbox writes that holds `place` by either spelling, if any.
function sandboxPartHolding(place: string, home: string): string | undefined {
  const real = realish(place)
  for (const h of [resolve(home), realish(home)])
    for (const w of sandboxWrittenParts(h)) if (within(place, w) || within(real, w)) return w
  return undefined
}

// The root or vis-home part a shell's pathname expansion of `place` may reach, if any: a value a
// shell runs (LESSOPEN's `|/tm?/W/lesspipe.sh %s`, GIT_SSH_COMMAND, EDITOR, `bash -c` args) globs
// each word, so `/tm?/W/x` is /tmp/W/x to it while its text lies in no root. Read two ways:
// - By components, from `/`: a pattern whose leading components match a target's components names
//   something in that target (fifteenth outsider pass), whether or not it exists yet; a pattern that
//   only reaches an ancestor names no file inside it. A pattern behind a link (every host has
//   /proc/self/root, a link to `/`: `/proc/self/root/tm?/W/x`) is also compared with its pattern-free
//   prefix resolved first, as the shell's globbing follows it (sixteenth outsider pass).
// - As the shell expands it, on the host's folders: every existing path the pattern's leading
//   components match, each judged by its real path, so a match that is a link outside every root
//   leading into one (`/srv/l?nk/tools/x` with /srv/link -> W) is caught where the components are not.
//   A pattern matching more than GLOB_PATHS existing paths is refused as a form this check cannot
//   compute.
function globVerdict(place: string, home: string, places: WritablePlaces): WordVerdict | undefined {
  if (!/[*?[]/.test(place)) return undefined
  const components = place.split('/').filter((c) => c !== '')
  const first = components.findIndex((c) => /[*?[]/.test(c))
  const prefix = realish(`/${components.slice(0, first).join('/')}`)
  const behind = [...prefix.split('/').filter((c) => c !== ''), ...components.slice(first)]
  const parts = [resolve(home), realish(home)].flatMap(sandboxWrittenParts)
  const targets = [...places.roots, ...parts]
  for (const pattern of [components, behind])
    for (const target of targets) {
      const steps = resolve(target)
        .split('/')
        .filter((c) => c !== '')
      if (pattern.length < steps.length) continue
      const reaches = steps.every((step, i) => {
        const match = globMatcher(pattern[i] ?? '')
        return match === undefined || match(step)
      })
      if (reaches) return { kind: 'pattern', place, reaches: target }
    }
  const expanded = expansionReaching(
    components,
    (real) => places.holding(real) ?? parts.find((w) => within(real, w)),
  )
  if (expanded === TOO_WIDE)
    return { kind: 'unbounded', form: `${place} (a pattern matching more than ${GLOB_PATHS} existing paths)` }
  return expanded === undefined ? undefined : { kind: 'pattern', place, reaches: expanded }
}

// The most existing paths expansionReaching reads for one pattern; past it, TOO_WIDE.
export const GLOB_PATHS = 4096
export const TOO_WIDE = Symbol('too wide')

// Expands `components` (a path from `/`, some of them patterns) over the existing folders as a shell
// does, one component at a time, and returns what `sandboxes` says of the first matched path whose
// real path a sandbox writes. Past the last pattern no folder is read: the remaining components are
// appended to each match and the whole path judged by its real path (and as the kernel reads a `..`
// in them), since a later component may be a link outside every root into one (`<out>/d?r/link/x`
// with <out>/dir/link -> W; eighteenth outsider pass: the caller's literal readings still hold the
// pattern, so they resolve nothing, and the expansion stopped at `d?r`). `sandboxes` is also given
// the matched path as expanded (home-includes.ts collects the matches a start file sources).
export function expansionReaching(
  components: readonly string[],
  sandboxes: (real: string, path: string) => string | undefined,
): string | typeof TOO_WIDE | undefined {
  let last = -1
  components.forEach((c, i) => {
    if (/[*?[]/.test(c)) last = i
  })
  let paths = ['/']
  let read = 0
  for (let i = 0; i <= last && paths.length > 0; i++) {
    const component = components[i] as string
    // A pattern this check cannot match (extglob, too many stars) is taken to match every entry.
    const match = /[*?[]/.test(component) ? (globMatcher(component) ?? (() => true)) : undefined
    const next: string[] = []
    for (const dir of paths) {
      const names = match === undefined ? [component] : entriesOf(dir).filter((name) => match(name))
      for (const name of names) {
        const path = dir === '/' ? `/${name}` : `${dir}/${name}`
        if (match !== undefined && ++read > GLOB_PATHS) return TOO_WIDE
        const real = realish(path)
        const reached = sandboxes(real, path)
        if (reached !== undefined) return reached
        next.push(path)
      }
    }
    paths = next
  }
  const rest = components.slice(last + 1)
  if (rest.length > 0)
    for (const match of paths)
      for (const reading of kernelReadings('/', [match, ...rest].join('/'))) {
        const reached = sandboxes(realish(reading), reading)
        if (reached !== undefined) return reached
      }
  return undefined
}

// A folder's entries, none when it cannot be read (a shell's pattern then matches nothing there).
function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

// The words of `value` an option parser may read as a path after clustered short switches: getopt
// programs (perl, python, gcc, ssh, tar...) take `-wI/w/lib` as `-w -I/w/lib`, so for a token that
// starts with `-`, each suffix after a leading option character (`-abcPATH`: `bcPATH`, `cPATH`, `PATH`)
// and each suffix starting with `/`, `~` or `$` (`-w3I$HOME/lib`) is a reading of its own (sixteenth
// outsider pass: only the suffix after one letter was read, so perl loaded W/lib/Planted.pm).
function clusteredReadings(value: string): string[] {
  const out = new Set<string>()
  for (const token of value.split(/[\s"'`;|&()<>]+/)) {
    if (!token.startsWith('-')) continue
    const body = token.replace(/^-+/, '')
    for (let i = 0; i < body.length && /[A-Za-z0-9]/.test(body[i] as string); i++) out.add(body.slice(i + 1))
    for (let j = 0; j < body.length; j++) if ('/~$'.includes(body[j] as string)) out.add(body.slice(j))
  }
  out.delete('')
  return [...out]
}

// Judges `value` as a word the server's program, or a shell it runs, reads: the first reason to
// refuse it, if any. Relative readings are resolved against every folder of `cwds` (the server's cwd,
// and for args every folder the args name: folderBases). `vars` is the environment the server gets,
// for `~` and `$NAME`; `home` the vis home. `spareShellForms`: a secret's value (server-env.ts
// SECRET_NAME) is random text no tool runs through a shell, so its `$(...)`, unbounded forms and
// `~user` are not refused; the places it names still are.
// `holdsRoot`: a place the word names that HOLDS a root is refused too, unless `holdsRoot` exempts it
// (server-env.ts: an env value, which programs read fixed places below: vim's $VIM/vimfiles,
// GOPATH's src and bin, PYTHONUSERBASE's site-packages, npm's prefix lib/node_modules, CARGO_HOME's
// config.toml; seventeenth outsider pass).
export function judgeWord(
  value: string,
  cwds: readonly string[],
  home: string,
  places: WritablePlaces,
  vars: Record<string, string | undefined>,
  opts: { spareShellForms?: boolean; holdsRoot?: { exempt: (place: string) => boolean } } = {},
): WordVerdict | undefined {
  const strict = opts.spareShellForms !== true
  const texts = [value, ...clusteredReadings(value)]
  const program = programVerdict(texts, home, places, vars)
  if (program !== undefined) return program
  for (const cwd of cwds)
    for (const text of texts) {
      const named = placesIn(text, cwd, vars)
      if (strict && named.commands.length > 0) return { kind: 'command' }
      const form = named.unbounded[0]
      if (strict && form !== undefined) return { kind: 'unbounded', form }
      const unknown = named.unresolved[0]
      if (strict && unknown !== undefined) return { kind: 'unresolved', word: unknown }
      for (const place of named.paths) {
        const globbed = globVerdict(place, home, places)
        if (globbed !== undefined) return globbed
        if (ownedByHome(place, home)) continue
        const where = sandboxWhere(place, home, places)
        if (where === undefined) {
          const held = opts.holdsRoot === undefined ? undefined : rootInside(place, places)
          if (held !== undefined && opts.holdsRoot?.exempt(place) !== true)
            return {
              kind: 'place',
              place,
              where:
                `${place} (a folder a program reads fixed places below: vim's $VIM/vimfiles, GOPATH's src, ` +
                `npm's prefix lib/node_modules) holds the session root ${held}`,
            }
          continue
        }
        return { kind: 'place', place, where }
      }
    }
  return undefined
}

// Where a sandbox writes `place`, said for a refusal: the root holding it, else the vis home's
// sandbox-written part holding it; undefined when neither does.
function sandboxWhere(place: string, home: string, places: WritablePlaces): string | undefined {
  const root = places.holding(place)
  if (root !== undefined) return inRoot(place, root)
  const part = sandboxPartHolding(place, home)
  return part === undefined
    ? undefined
    : `${place} lies in ${part} (the vis home's outboxes, drafts, blobs or logs)`
}

// The root lying inside the folder `place` (by its written or real path), if any (home-includes.ts
// applies it to a user-site .pth line, as it is applied here to PYTHONPATH).
export function rootInside(place: string, places: WritablePlaces): string | undefined {
  const spellings = new Set([resolve(place), realish(place)])
  return places.roots.find((r) => [...spellings].some((d) => r !== d && within(r, d)))
}

// The first program a word of `texts` runs by name (programNames) found on the server's PATH whose
// file lies in a root or the vis home's sandbox-written parts, by its path or its real path: a PATH
// folder outside every root may hold a link into one (`npm link`, `ln -s ~/proj/bin/tool
// /usr/local/bin/`), refused as mcp.json's `command` and so here, where a shell given the args or a
// tool reading the value runs it by name (seventeenth outsider pass). Only PATH's folders outside every
// root are searched: the others are passed over for the server (launch.ts cleanPath).
function programVerdict(
  texts: readonly string[],
  home: string,
  places: WritablePlaces,
  vars: Record<string, string | undefined>,
): WordVerdict | undefined {
  const dirs = absoluteEntries((vars.PATH ?? '').split(':')).filter((d) => places.holding(d) === undefined)
  if (dirs.length === 0) return undefined
  for (const text of texts)
    for (const name of programNames(text, vars))
      for (const program of programsOn(name, dirs)) {
        if (ownedByHome(program, home)) continue
        const where = sandboxWhere(program, home, places)
        if (where === undefined) continue
        return { kind: 'place', place: program, where: `the program ${name}, found on PATH as ${where}` }
      }
  return undefined
}

// How many folders the args may name for their relative words to be read against; past it the args
// are refused (a relative word read against a folder not judged may lie in a root).
export const MAX_BASES = 256

// The folders a relative word of the args may be read from: the server's cwd, every existing folder
// any reading of any argument or mcp.json env value (PATH aside: launch.ts cleans it) names, and those
// named relatively from them in turn, to a fixed point. The program the args start often changes
// folder first (`bash -c "cd /home/me/projects && . myproj/x"`, `uv --directory D run x.py`, `git -C
// D`, `make -C D`, `npm --prefix D`), and the relative word then names a file under that folder, a
// root's parent no root holds (sixteenth outsider pass). Eighteenth outsider pass:
// - a chain of relative `cd`s (`cd B && cd x && cd y && . work/x`) was followed two steps only;
// - a bare `cd` (or `pushd`/`popd`, or `cd $EMPTY`) goes to HOME, which no argument names, so the
//   server's HOME and the user's are bases whenever the args hold one (changesToHome). `cd -`,
//   `$OLDPWD` and `~-` lead to a folder changed to before, a base already (placesIn reads PWD and
//   OLDPWD as each base), and `~+`/`~-` are refused as words no HOME resolves;
// - an env value's folders are where a program reads module and relative names (`PYTHONPATH=$HOME`
//   with `python3 -m work.tool` imports ~/work/tool.py; NODE_PATH, CDPATH, PERL5LIB...), and an env
//   value may name HOME and the folders above it though they hold a root (server-env.ts
//   commonHolders), so the args' words are read against each such folder too.
// Only a folder that exists can be changed to, and a root inside a folder makes that folder exist.
// Returns undefined past MAX_BASES.
export function folderBases(
  args: readonly string[],
  cwd: string,
  vars: Record<string, string | undefined>,
  env: Readonly<Record<string, string>> = {},
): string[] | undefined {
  const texts = [...args, ...Object.entries(env).flatMap(([name, value]) => (name === 'PATH' ? [] : [value]))]
  const bases = new Set<string>()
  let from: string[] = []
  const add = (p: string): boolean => {
    if (bases.has(p) || !isFolder(p)) return true
    bases.add(p)
    from.push(p)
    return bases.size <= MAX_BASES
  }
  add(resolve(cwd))
  if (args.some(changesToHome))
    for (const h of [vars.HOME, homedir()])
      if (h !== undefined && h !== '' && isAbsolute(h)) for (const p of [resolve(h), realish(h)]) add(p)
  while (from.length > 0) {
    const current = from
    from = []
    for (const base of current)
      for (const arg of texts)
        for (const text of [arg, ...clusteredReadings(arg)])
          for (const p of placesIn(text, base, vars).paths) if (!add(p)) return undefined
  }
  return [...bases]
}

// Whether `arg`, run by a shell, may change to HOME: a `cd` (or `pushd`/`popd`) with no operand
// after its options (a redirection `cd >/dev/null` is none), or with one that may expand to nothing
// (`cd $DIR` with DIR unset, `cd ""`).
// Read on the text as written, as a word at any position: a word `cd` that is no command only adds
// HOME as a base, which refuses nothing unless a relative word names a root's file from HOME.
function changesToHome(arg: string): boolean {
  for (const m of arg.matchAll(CHANGE_DIR)) {
    const operand = m[1] ?? ''
    if (/^(?:$|[;&|)}\n`#<>]|[0-9][<>]|["']?\$|""|'')/.test(operand)) return true
  }
  return false
}

const CHANGE_DIR =
  /(?:^|[\s;&|(){}!`"'])(?:cd|pushd|popd)(?=$|[\s;&|(){}`"'])(?:[ \t]+-[LPe@]+)*(?:[ \t]+--)?[ \t]*([\s\S]{0,2})/g

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

// The sentence refusing a word: `subject` says which (`env.PYTHONPATH`, `args[1] "-I..."`), `naming`
// the verb before the place it names ('' or 'names '), `target` where the person writes it instead
// (`PYTHONPATH`, `that argument`), `why` what such a word does, `fix` what to do.
export function refusal(
  server: string,
  subject: string,
  naming: string,
  target: string,
  verdict: WordVerdict,
  why: string,
  fix: string,
): string {
  switch (verdict.kind) {
    case 'command':
      return (
        `MCP server ${server}: its ${subject} holds a command substitution ($(...) or backticks), which a ` +
        `shell runs to make the value, so where it leads cannot be judged before it runs; write the folder ` +
        `in ${target} as a path (a literal one, or $NAME of a variable the server gets)`
      )
    case 'unbounded':
      return (
        `MCP server ${server}: its ${subject} holds the shell form ${verdict.form}, whose result this check ` +
        `cannot compute, so where it leads cannot be judged before a shell expands it; write the folder in ${target} as a path (a literal one, $NAME or \${NAME} of a variable ` +
        `the server gets, or a form computed from one: \${NAME%/}, \${NAME#pat}, \${NAME/a/b}, \${NAME:0:3})`
      )
    case 'unresolved':
      return (
        `MCP server ${server}: its ${subject} names ${verdict.word}, another user's home, which this check cannot ` +
        `locate to tell whether a sandbox writes it; write that folder in ${target} as an absolute path`
      )
    case 'pattern':
      return (
        `MCP server ${server}: its ${subject} ${naming}${verdict.place}, which holds a shell pattern (*, ? or [...]) that a shell ` +
        `running the value may expand to a path in ${verdict.reaches}, which a sandbox writes; ${fix}, spelled ` +
        'without a pattern'
      )
    case 'place':
      return `MCP server ${server}: its ${subject} ${naming}${verdict.where}, which a sandbox writes, and ${why}; ${fix}`
  }
}
