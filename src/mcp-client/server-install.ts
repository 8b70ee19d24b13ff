import { spawnSync } from 'node:child_process'
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { within } from '../util/path-within.js'
import { realish } from '../util/real-path.js'
import { placeInRoot } from '../util/tool-home.js'
import type { WritablePlaces } from '../util/writable-roots.js'
import { placesIn } from './env-spellings.js'
import { folderBases } from './judge-word.js'

// Where a stdio server's own install leads into a root (eighteenth outsider pass). launch.ts judges the
// paths mcp.json names (command, cwd, env, args); a server installed outside every root still loads
// what its install points at, and three everyday installs point into a project:
// - python: an editable install (`pip install -e ~/proj`) writes a `.pth` into the site-packages of the
//   interpreter the server runs (a venv, a pyenv version) naming ~/proj/src, and python puts it on
//   sys.path at every start, as a user-site `.pth` (home-includes.ts) does;
// - git: a worktree (`git worktree add ~/wt/x`) holds a `.git` FILE naming `<repo>/.git/worktrees/x`, and
//   every git run there reads the repository's config and hooks (core.fsmonitor) from <repo>/.git;
// - node: a `file:` dependency or `npm link` makes `node_modules/lib` a link to the project, and
//   `require('lib')` loads it.
// Each is read here, bounded, and the start refused (the caller's mcp.launch-denied) with the file and
// the root named. Only while a root is open: with none, nothing can be led into.

// The bounds: past them the start is refused, as what was not read may lead into a root.
const MAX_ENTRIES = 20_000 // folder entries lstat'ed in all (site-packages, node_modules, .git)
const MAX_FOLDERS = 1024 // folders whose `.git` and `node_modules` are looked for (each ancestor counts)
const MAX_PTH_FILES = 200
const MAX_BYTES = 256 * 1024 // a `.pth` file or a module its import line runs
const GITFILE_BYTES = 4096 // a `.git` file or a `commondir`: one line
const ASK_MS = 5_000 // asking the interpreter where its site-packages are

class Refused extends Error {}

// stat and lstat, undefined on any error (a link loop, a name too long, a folder not readable): such a
// place is read as missing, as git and Node pass over what they cannot open.
function stat(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}
function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

// Why `place` is, lies in or leads into a root, if it does; `folder` also when a root lies inside it.
function judged(place: string, places: WritablePlaces, folder = false): string | undefined {
  const why = placeInRoot(place, places)
  if (why !== undefined || !folder) return why
  const spellings = new Set([resolve(place), realish(place)])
  const held = places.roots.find((r) => [...spellings].some((d) => r !== d && within(r, d)))
  return held === undefined ? undefined : `it holds the session root ${held}`
}

class Reading {
  entries = 0
  pthFiles = 0
  readonly folders = new Set<string>()
  constructor(readonly places: WritablePlaces) {}

  // The names in `dir`, counted against MAX_ENTRIES; none when it cannot be read.
  listing(dir: string): string[] {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return []
    }
    this.entries += names.length
    if (this.entries > MAX_ENTRIES)
      throw new Refused(
        `the folders its install loads from hold more than ${MAX_ENTRIES} entries (${dir} and after were not ` +
          'read), too many to judge whether a link among them leads into a session root',
      )
    return names
  }

  // The one helper for links: every entry of `dir` that is a link is judged by where it leads (a
  // dangling one too: its target is a file a sandbox may make). `what` says what loads from `dir`.
  links(dir: string, what: string): void {
    for (const name of this.listing(dir)) {
      const path = join(dir, name)
      if (!lstat(path)?.isSymbolicLink()) continue
      const why = judged(path, this.places)
      if (why !== undefined) throw new Refused(`${path} (${what}): ${why}`)
    }
  }

  // A regular file's text, at most `max` bytes (past it: refused when `whole`, else cut), undefined
  // when it is none. Opened non-blocking: a FIFO put there does not hang the judgement.
  text(path: string, max: number, whole: boolean): string | undefined {
    const st = stat(path)
    if (st === undefined || !st.isFile()) return undefined
    if (whole && st.size > max) throw new Refused(`${path} is larger than ${max} bytes and was not read`)
    try {
      const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const buf = Buffer.alloc(max + 1)
        const n = readSync(fd, buf, 0, buf.length, 0)
        if (whole && n > max) throw new Refused(`${path} is larger than ${max} bytes and was not read`)
        return buf.subarray(0, Math.min(n, max)).toString('utf8')
      } finally {
        closeSync(fd)
      }
    } catch (err) {
      if (err instanceof Refused) throw err
      return undefined
    }
  }

  // `folder` and each folder above it up to `/`, those not visited before (MAX_FOLDERS in all): git
  // discovers a repository and Node resolves a module from each of them.
  ancestors(folder: string): string[] {
    const out: string[] = []
    for (let d = resolve(folder); ; d = dirname(d)) {
      if (!this.folders.has(d)) {
        this.folders.add(d)
        if (this.folders.size > MAX_FOLDERS)
          throw new Refused(
            `its args name more than ${MAX_FOLDERS} folders, too many to judge what they load`,
          )
        out.push(d)
      }
      if (dirname(d) === d) break
    }
    return out
  }
}

// ---- python: the `.pth` files of the interpreter the server runs ----

// Whether `command` runs a python: by its name, its real path's name, or a venv's pyvenv.cfg beside it.
function isPython(command: string): boolean {
  const looks = (p: string) => /^(python|pypy)[0-9.]*$/.test(basename(p))
  return looks(command) || looks(realish(command)) || venvOf(command) !== undefined
}

// The venv a `bin/python` belongs to (pyvenv.cfg beside it or one folder up, where python looks).
function venvOf(command: string): string | undefined {
  for (const d of [dirname(command), dirname(dirname(command))])
    if (stat(join(d, 'pyvenv.cfg'))?.isFile()) return d
  return undefined
}

// The `lib/python*/site-packages` (and lib64, Debian's dist-packages) folders of `prefix`.
function sitesUnder(prefix: string): string[] {
  const out: string[] = []
  for (const lib of ['lib', 'lib64'])
    for (const v of listingOf(join(prefix, lib))) {
      if (!v.startsWith('python') && !v.startsWith('pypy')) continue
      for (const s of ['site-packages', 'dist-packages']) out.push(join(prefix, lib, v, s))
    }
  return out
}

function listingOf(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

// What the interpreter says its site folders are, asked once per interpreter file (by its real path
// and modification time): with -S python processes no `.pth` (which would run the import lines being
// judged) and the code imports `site` only for its functions; -s leaves out the user site, judged with
// HOME (home-includes.ts). Asked in the server's cwd and environment, as a pyenv shim picks its version
// from them. Every prefix is asked: a venv with include-system-site-packages adds its base's sites.
const asked = new Map<string, string[]>()
const ASK =
  'import sys\nsys.path[:] = [p for p in sys.path if p]\nimport site\n' +
  'print("\\n".join(site.getsitepackages([sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix])))'

function askedSites(command: string, cwd: string, env: Record<string, string | undefined>): string[] {
  const st = stat(realish(command))
  const key = `${command}\0${realish(command)}\0${st?.mtimeMs ?? ''}\0${cwd}`
  const known = asked.get(key)
  if (known !== undefined) return known
  const r = spawnSync(command, ['-S', '-s', '-c', ASK], {
    cwd,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: ASK_MS,
    maxBuffer: 64 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  const sites = r.status === 0 ? r.stdout.split('\n').filter((l) => l.startsWith('/')) : []
  if (r.status === 0) asked.set(key, sites)
  return sites
}

// The site folders of the server's python: its venv's, its real path's prefix's (`<prefix>/bin/python3.11`),
// and what it says itself (asking may fail: a wrapper taking no -c; the folders found by path remain).
function pythonSites(command: string, cwd: string, env: Record<string, string | undefined>): string[] {
  const sites = new Set<string>()
  const venv = venvOf(command)
  if (venv !== undefined) for (const s of sitesUnder(venv)) sites.add(s)
  for (const s of sitesUnder(dirname(dirname(realish(command))))) sites.add(s)
  for (const s of askedSites(command, cwd, env)) sites.add(s)
  return [...sites].filter((s) => stat(s)?.isDirectory() === true)
}

// Absolute or `~` paths written as string literals in python text (an import line of a `.pth`, the
// module it imports: setuptools' editable finder keeps `MAPPING = {'proj': '/home/me/proj/src/proj'}`).
function literalPaths(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/(['"])((?:[/~])[^'"\n]*)\1/g)) out.push(m[2] as string)
  return out
}

// Each `.pth` of each site: a path line is a folder python puts on sys.path (relative to the site),
// refused when it is, lies in, leads into or holds a root (a folder holding one makes the root an
// importable package); an `import` line runs code at every start, judged by the paths it and the modules
// it imports from the site write as literals (this check runs no code). Links in the site are judged too
// (`site-packages/proj -> W/src/proj`, a `.pth` linked into a root).
function pythonInstall(
  r: Reading,
  command: string,
  cwd: string,
  env: Record<string, string | undefined>,
): void {
  for (const site of pythonSites(command, cwd, env)) {
    const siteWhy = judged(site, r.places)
    if (siteWhy !== undefined) throw new Refused(`its python's site folder ${site}: ${siteWhy}`)
    r.links(site, "its python's site folder, which python imports from")
    for (const f of listingOf(site)) {
      if (!f.endsWith('.pth')) continue
      const pth = join(site, f)
      if (++r.pthFiles > MAX_PTH_FILES)
        throw new Refused(
          `its python's site folders hold more than ${MAX_PTH_FILES} .pth files (${pth} was not read)`,
        )
      const text = r.text(pth, MAX_BYTES, true)
      if (text === undefined) continue
      for (const raw of text.split('\n')) {
        const line = raw.trimEnd()
        if (line.trim() === '' || line.startsWith('#')) continue
        if (/^import[ \t]/.test(line)) {
          importLine(r, site, pth, line)
          continue
        }
        const p = resolve(site, line)
        const why = judged(p, r.places, true)
        if (why !== undefined)
          throw new Refused(`${pth} puts ${p} on its python's path at every start: ${why}`)
      }
    }
  }
}

// An import line of `pth`: the paths it writes, and those the site's modules it names write.
function importLine(r: Reading, site: string, pth: string, line: string): void {
  const texts: [string, string][] = [[pth, line]]
  for (const m of line.matchAll(/(?:\bimport\s+|__import__\(\s*['"])([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = m[1] as string
    for (const file of [join(site, `${name}.py`), join(site, name, '__init__.py')]) {
      const text = r.text(file, MAX_BYTES, true)
      if (text !== undefined) texts.push([file, text])
    }
  }
  for (const [file, text] of texts)
    for (const lit of literalPaths(text)) {
      const p = lit.startsWith('~') ? join(process.env.HOME ?? '/', lit.slice(1)) : lit
      const why = judged(p, r.places)
      if (why !== undefined)
        throw new Refused(`${file} (run by ${pth}'s import line at every python start) names ${p}: ${why}`)
    }
}

// ---- git: a `.git` file (a worktree, a submodule) leading into a root ----

// `.git` in `folder` and each folder above it, as git discovers a repository from a server's cwd or a
// folder its args name (`git -C D`, `--repository D`): a `.git` that is or leads into a root, a `.git`
// FILE whose `gitdir:` (and the `commondir` that names) lies in one (git reads config and hooks there),
// and links in those folders (`.git/config -> W/gitconfig`).
function gitInstall(r: Reading, folders: readonly string[]): void {
  for (const d of folders) {
    const dotGit = join(d, '.git')
    const st = lstat(dotGit)
    if (st === undefined) continue
    const why = judged(dotGit, r.places)
    if (why !== undefined) throw new Refused(`${dotGit}, which git reads in ${d}: ${why}`)
    let gitDir = dotGit
    if (!stat(dotGit)?.isDirectory()) {
      const text = r.text(dotGit, GITFILE_BYTES, false)
      const m = text === undefined ? null : /^gitdir:[ \t]*(.+?)[ \t]*$/m.exec(text)
      if (m === null) continue
      gitDir = resolve(d, m[1] as string)
      const whyDir = judged(gitDir, r.places)
      if (whyDir !== undefined)
        throw new Refused(
          `${dotGit} names the git folder ${gitDir} (git reads its config and hooks there): ${whyDir}`,
        )
    }
    const dirs = [gitDir]
    const common = r.text(join(gitDir, 'commondir'), GITFILE_BYTES, false)?.split('\n')[0]?.trim()
    if (common !== undefined && common !== '') {
      const commonDir = resolve(gitDir, common)
      const whyCommon = judged(commonDir, r.places)
      if (whyCommon !== undefined)
        throw new Refused(
          `${join(gitDir, 'commondir')} names the repository's common folder ${commonDir} ` +
            `(git reads its config and hooks there for ${d}): ${whyCommon}`,
        )
      dirs.push(commonDir)
    }
    for (const g of dirs) {
      r.links(g, `git's folder for ${d}`)
      r.links(join(g, 'hooks'), `git's hooks for ${d}`)
    }
  }
}

// ---- node: links in the node_modules a script resolves its modules from ----

// `node_modules` in each folder (Node looks in the script's folder and every one above it): one that is
// or leads into a root, and links among its entries (a `file:` dependency, `npm link`), its `@scope`
// folders' and `.bin`'s.
function nodeInstall(r: Reading, folders: readonly string[]): void {
  for (const d of folders) {
    const nm = join(d, 'node_modules')
    if (lstat(nm) === undefined) continue
    const why = judged(nm, r.places)
    if (why !== undefined) throw new Refused(`${nm}, where Node resolves modules for ${d}: ${why}`)
    const what = `Node resolves modules from it for ${d}`
    r.links(nm, what)
    for (const name of listingOf(nm))
      if (name.startsWith('@') || name === '.bin') r.links(join(nm, name), what)
  }
}

// The folders the server's install is read from: its cwd, every existing folder its args name (and
// those named relatively from them: folderBases), the folder of each existing file they name (a
// script), and the command's folder by its path and real path.
function installFolders(
  command: string,
  args: readonly string[],
  cwd: string,
  vars: Record<string, string | undefined>,
): string[] | undefined {
  const bases = folderBases(args, cwd, vars)
  if (bases === undefined) return undefined
  const out = new Set(bases)
  for (const base of bases)
    for (const arg of args)
      for (const p of placesIn(arg, base, vars).paths)
        if (stat(p)?.isFile()) {
          out.add(dirname(p))
          out.add(dirname(realish(p)))
        }
  out.add(dirname(command))
  out.add(dirname(realish(command)))
  return [...out]
}

// Why the server's install (its python's site-packages, a `.git` or `node_modules` by the folders it
// starts in and its args name) leads into a root, if it does; the sentence names the file and the root.
export function installInRoot(
  command: string,
  args: readonly string[],
  cwd: string,
  vars: Record<string, string | undefined>,
  places: WritablePlaces,
): string | undefined {
  if (places.roots.length === 0) return undefined
  const r = new Reading(places)
  try {
    if (isPython(command)) pythonInstall(r, command, cwd, vars)
    const folders = installFolders(command, args, cwd, vars)
    // Too many folders named: checkArgs refuses those args first.
    if (folders === undefined) return undefined
    const all = folders.flatMap((f) => r.ancestors(f))
    gitInstall(r, all)
    nodeInstall(r, all)
  } catch (err) {
    if (err instanceof Refused) return err.message
    throw err
  }
  return undefined
}
