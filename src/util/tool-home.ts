import {
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { rootHolding } from './host-programs.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'
import type { WritablePlaces } from './writable-roots.js'

// The HOME a tool the host runs (an MCP server; vis's own pip and npm) reads its user configuration
// from. npx, uvx, pip and Python read it from HOME before anything else (~/.npmrc's `script-shell=`
// and `prefix=`, pip.conf's indexes, ~/.local's user site with its .pth files), so a tool whose HOME
// a sandbox writes (a session rooted at $HOME, which the roots allow) runs what a block chose.

// Where the tools look under HOME: a root holding one of these, or lying inside one, decides as a
// root holding HOME does.
// `bin` too (sixteenth outsider pass): Debian's and Ubuntu's skeleton ~/.profile puts `$HOME/bin`
// first on PATH for every login shell, so a `bash -lc "npx ..."` server ran a block's ~/bin/npx.
const USER_PLACES = ['.npmrc', '.npm', '.config', '.local', '.cache', '.pip', '.pydistutils.cfg', 'bin']

// Where `path` lies in `root`, for a message: a root renamed since its jail began is named as the
// jail recorded it, so the path's own place is said too.
export function inRoot(path: string, root: string): string {
  const renamed = rootHolding(path, [root]) === undefined ? ' (renamed since its session began)' : ''
  return `${path} lies in the session root ${root}${renamed}`
}

// Why `home` is no HOME for a tool the host runs, if it is not: a root holds it or a place under it,
// or a place a program reads as configuration there is, lies in or leads into a root (configPlaceInRoot).
export function homeInRoot(home: string, places: WritablePlaces): string | undefined {
  for (const p of [home, ...USER_PLACES.map((d) => join(home, d))]) {
    const root = places.holding(p)
    if (root !== undefined) return inRoot(p, root)
  }
  const real = realish(home)
  for (const r of places.roots)
    for (const d of USER_PLACES)
      if (within(r, join(real, d))) return `the session root ${r} lies in ${join(home, d)}`
  return configPlaceInRoot(home, real, places)
}

// Every top-level `~/.*` entry of HOME is some program's configuration (~/.gitconfig, ~/.bash_profile,
// ~/.ssh, ~/.vimrc...), and so is what lies below one (~/.config/git/config, ~/.ssh/config,
// ~/.local/bin/tool); the list of programs is open, so HOME is judged by shape. Dotfile managers
// (GNU stow, chezmoi's symlink mode, yadm) keep those files in a folder and link them into HOME, a
// whole folder or (stow --no-folding) each file at its depth, so a session on that folder writes the
// configuration of every git and bash a server runs (fifteenth outsider pass: ~/.gitconfig ->
// ~/dotfiles/gitconfig, whose core.fsmonitor git ran on the host). Why such an entry is, lies in or
// leads into a root, if one does. Asked at a server's start and again only when the roots change
// (launch.ts placesStamp): the roots are compared by path, links read and resolved, regular files
// stat'ed for hard links, and the files that run code by design read for what they name
// (src/mcp-client/home-includes.ts, within its own bounds, asked by its callers after this).
function configPlaceInRoot(home: string, real: string, places: WritablePlaces): string | undefined {
  // No root open anywhere: nothing to lead into, and no listing read.
  if (places.roots.length === 0) return undefined
  // A root inside a dot entry (~/.ssh, ~/.config/git, a root at ~/.vim itself), by HOME's written
  // and real path: such an entry is a folder, whose name is the first step from HOME to the root.
  for (const r of places.roots)
    for (const h of new Set([resolve(home), real])) {
      if (r === h || !within(r, h)) continue
      const first = relative(h, r).split(sep)[0] ?? ''
      if (first.startsWith('.')) return `the session root ${r} lies in ${join(home, first)}`
    }
  // ~/bin has no leading dot but is on a login shell's PATH (USER_PLACES): its links are read too.
  const dotFolders: Walk = {
    depth: WALK_DEPTH,
    skipNames: NOT_CONFIG_NAMES,
    skipPaths: NOT_CONFIG,
    dotOnlyAtTop: true,
    label: "HOME's dot folders",
  }
  return (
    linkBelow(home, places, dotFolders) ??
    linkBelow(join(home, 'bin'), places, {
      depth: 0,
      skipNames: new Set(),
      label: `the entries of ${join(home, 'bin')}`,
    })
  )
}

// Why the place `path` (a configuration file named it) is, lies in or leads into a root, if it does:
// by its path, and by where it leads through links (a dangling one too, as linkTarget reads it).
export function placeInRoot(path: string, places: WritablePlaces): string | undefined {
  const root = places.holding(path)
  if (root !== undefined) return inRoot(path, root)
  const target = linkTarget(path)
  const via = places.holding(target)
  if (via !== undefined) return `it leads to ${target}, which lies in the session root ${via}`
  return undefined
}

// Why the folder `dir` a program reads configuration, data or code from (an mcp.json
// XDG_CONFIG_HOME, the password database's ~/.ssh) is no such folder for a tool the host runs, if
// it is not: a root holds it (by path or identity), lies inside it (by its written or real path), or a
// link below it (down to WALK_DEPTH, all names) is, lies in or leads into a root. `walk` false reads
// no listing (a cache folder, large and not configuration: as homeInRoot treats ~/.cache).
export function folderInRoot(dir: string, places: WritablePlaces, walk = true): string | undefined {
  const root = places.holding(dir)
  if (root !== undefined) return inRoot(dir, root)
  if (places.roots.length === 0) return undefined
  for (const r of places.roots)
    for (const d of new Set([resolve(dir), realish(dir)]))
      if (r !== d && within(r, d)) return `the session root ${r} lies in ${dir}`
  return walk
    ? linkBelow(dir, places, {
        depth: WALK_DEPTH,
        skipNames: NOT_CONFIG_NAMES,
        label: `${dir} and the folders below it`,
      })
    : undefined
}

// How a folder is read for links: folders down to `depth` more levels, passing over folders named in
// `skipNames` or lying at a path (from the folder) in `skipPaths`; `dotOnlyAtTop`: of the folder's own
// entries only dot ones count (HOME: ~/project may be a link to a root), and a dot link to a folder
// is read as that folder (~/.config -> ~/dotfiles/config) whatever `depth` is; deeper, a link to a
// folder is read as one while `depth` allows. `label` names the folder in a refusal.
type Walk = {
  depth: number
  skipNames: ReadonlySet<string>
  skipPaths?: ReadonlySet<string>
  dotOnlyAtTop?: boolean
  label: string
}

// Why a link below `dir` lies in or leads into a root, if one does; past WALK_ENTRIES entries, unfit
// (a link not read may lead into one). Every link to a folder is read as that folder, at any depth
// (seventeenth outsider pass: ~/.config/git -> ~/dotfiles/git, whose `config` links into a root, was
// judged only by where it leads): the folder it leads to lies outside every root (linkInRoot), and is
// read within the same depth and entry bounds, once by its real path (a link back up is no cycle). A
// regular file with more than one name on a root's device may be a hard link of a root's file
// (hardLinkInRoot).
function linkBelow(dir: string, places: WritablePlaces, walk: Walk): string | undefined {
  const queue: [dir: string, depth: number][] = [[dir, 0]]
  const seen = new Set<string>([realish(dir)])
  const devices = rootDevices(places)
  let read = 0
  for (let at = 0; at < queue.length; at++) {
    const [d, level] = queue[at]!
    let entries: Dirent[]
    try {
      entries = readdirSync(d, { withFileTypes: true })
    } catch {
      continue
    }
    read += entries.length
    if (read > WALK_ENTRIES)
      return `${walk.label} hold more than ${WALK_ENTRIES} entries (${d} and after were not read for links into a session root)`
    for (const e of entries) {
      const top = level === 0 && walk.dotOnlyAtTop === true
      if (top && !e.name.startsWith('.')) continue
      const path = join(d, e.name)
      const deeper =
        level < walk.depth && !walk.skipNames.has(e.name) && !walk.skipPaths?.has(relative(dir, path))
      if (e.isSymbolicLink()) {
        const why = linkInRoot(path, places)
        if (why !== undefined) return why
        // A link to a folder at the top is read even with depth 0 (~/.config -> ~/dotfiles/config).
        if ((deeper || top) && isFolder(path)) {
          const real = realish(path)
          if (!seen.has(real)) {
            seen.add(real)
            queue.push([path, level + 1])
          }
        } else if (devices.size > 0) {
          const why = hardLinkInRoot(path, devices)
          if (why !== undefined) return why
        }
      } else if (e.isDirectory()) {
        // A folder reached by no link is reached once; only links can lead back (seen).
        if (deeper) queue.push([path, level + 1])
      } else if (e.isFile() && devices.size > 0) {
        const why = hardLinkInRoot(path, devices)
        if (why !== undefined) return why
      }
    }
  }
  return undefined
}

// The devices the roots lie on: a hard link of a root's file lies on its root's device.
function rootDevices(places: WritablePlaces): Set<number> {
  const out = new Set<number>()
  for (const r of places.roots) {
    const st = statOrNot(r)
    if (st !== undefined) out.add(st.dev)
  }
  return out
}

// Why the regular file at `path` (followed, so a link's file too) may be a root's file under another
// name, if it may: a hard link is an ordinary file to every check of paths and links (seventeenth
// outsider pass: `ln ~/dotfiles/gitconfig ~/.gitconfig`, a session on ~/dotfiles rewrote it in place
// and the host's git ran its core.fsmonitor). Whether the other name lies in a root would take a walk
// of every root (a project tree, any size) at each judgement; a file with more than one name on a
// root's device is judged unfit instead, which costs one stat per file. Hard-linked files are rare
// among configuration; a tool that links its own files (uv's hardlink mode under ~/.local/share/uv)
// makes such a HOME private to servers while a root on that device is open.
function hardLinkInRoot(path: string, devices: ReadonlySet<number>): string | undefined {
  const st = statOrNot(path)
  if (st === undefined || !st.isFile() || st.nlink < 2 || !devices.has(st.dev)) return undefined
  return `${path} has ${st.nlink} names (hard links) on the device of a session root, and one may lie in the root`
}

// Why OpenSSH, run by a tool the host runs, would read what a sandbox wrote, if it would: ssh finds
// ~/.ssh/config (its `Match exec`, `ProxyCommand`, `LocalCommand`, `KnownHostsCommand` run on the host),
// known_hosts and keys in the password database's home (getpwuid(uid)->pw_dir), never $HOME, so a
// private HOME does not cover it (sixteenth outsider pass: git over ssh, rsync and scp in a server
// read the block's ~/.ssh/config under a root at ~). Only ~/.ssh is read there, so only it is judged:
// held by a root (a root at the home itself), holding one, or holding a link into one, and what its
// config and the files it `Include`s name (seventeenth outsider pass: read by
// src/mcp-client/home-includes.ts, asked by the callers).
export function sshHomeInRoot(passwdHome: string, places: WritablePlaces): string | undefined {
  return folderInRoot(join(passwdHome, '.ssh'), places)
}

// How deep below HOME, and how many entries in all, the dot folders are read for links. A sandbox
// cannot add entries there (a root inside a dot folder is refused above), so only the person's own
// HOME reaches the bound; past it HOME is judged unfit (a link not read may lead into a root), which
// the tool's caller says with this reason.
const WALK_DEPTH = 8
const WALK_ENTRIES = 50_000
// Data and caches, not configuration, and large: not read (by their path from HOME, or any folder
// of these names).
const NOT_CONFIG = new Set(
  [
    '.cache',
    '.npm',
    '.vis',
    '.cargo/registry',
    '.cargo/git',
    '.rustup/toolchains',
    '.pyenv/versions',
    '.nvm/versions',
    '.m2/repository',
    '.gradle/caches',
    '.local/share/Trash',
    '.local/share/containers',
    '.local/share/flatpak',
  ].map((p) => p.split('/').join(sep)),
)
const NOT_CONFIG_NAMES = new Set(['node_modules', '.git', '__pycache__'])

function linkInRoot(link: string, places: WritablePlaces): string | undefined {
  const target = linkTarget(link)
  const root = places.holding(link) ?? places.holding(target)
  if (root !== undefined) return `${link} links to ${target}, which lies in the session root ${root}`
  // A link to a folder that holds a root (~/.config -> ~/dotfiles/config, a root at its git/).
  for (const r of places.roots)
    if (within(r, target)) return `the session root ${r} lies in ${target}, which ${link} links to`
  return undefined
}

function statOrNot(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

// Where the link `link` leads, followed link by link while the target does not exist yet (a dangling
// ~/.gitconfig -> W/gitconfig is a file the root's sandbox may make at any time): realish resolves only
// a path that exists, and of one that does not only its existing parent.
function linkTarget(link: string): string {
  let at = link
  for (let hops = 0; hops < 40; hops++) {
    let next: string
    try {
      if (!lstatSync(at).isSymbolicLink()) break
      next = readlinkSync(at)
    } catch {
      break
    }
    // A relative target is read from the folder the link is in, as the kernel resolves it.
    at = resolve(realish(dirname(at)), next)
  }
  return realish(at)
}

// Makes `dir` (a folder of the host's, no sandbox writes it) a HOME for a tool and returns the
// variables that point the tool there: the XDG folders beneath it, an empty npm user config and no
// Python user site.
export function privateHomeEnv(dir: string): Record<string, string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const npmrc = join(dir, '.npmrc')
  try {
    writeFileSync(npmrc, '', { flag: 'wx', mode: 0o600 })
  } catch {
    // already there: the host's own file, in a folder no sandbox writes
  }
  return {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    npm_config_userconfig: npmrc,
    PYTHONNOUSERSITE: '1',
  }
}

// The environment for a host python run as a staging step (pip for `vis runtime stage --with`):
// the caller's, without its PYTHON* and PIP_* variables (pip reads its options from PIP_*), with
// `home` (see privateHomeEnv) as HOME. The run itself passes -I and pip --isolated; this covers
// what they leave to HOME (pip's cache and the XDG places).
export function isolatedPythonEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    const u = k.toUpperCase()
    if (u.startsWith('PYTHON') || u.startsWith('PIP_') || u.startsWith('XDG_')) continue
    env[k] = v
  }
  return { ...env, ...privateHomeEnv(home) }
}

// npm's global config: <prefix>/etc/npmrc, the prefix being npm_config_prefix or the running
// node's install (npm's own rule for a node started from <prefix>/bin).
export function npmGlobalConfig(): string {
  const prefix = process.env.npm_config_prefix ?? process.env.NPM_CONFIG_PREFIX
  return join(prefix ? resolve(prefix) : dirname(dirname(process.execPath)), 'etc', 'npmrc')
}

// What an npm the host runs (a bundle's pack and install) gets in its environment for its
// configuration: nothing when the host's HOME and npm's global config lie outside every writable
// place (the person's ~/.npmrc, with its registry and credentials, still applies); otherwise a
// private HOME made in `privateDir()` and an empty config for what a sandbox could write.
export function npmConfigEnv(places: WritablePlaces, privateDir: () => string): Record<string, string> {
  const out: Record<string, string> = {}
  const host = process.env.HOME
  let empty: string | undefined
  if (host !== undefined && host !== '' && homeInRoot(resolve(host), places) !== undefined) {
    Object.assign(out, privateHomeEnv(privateDir()))
    empty = out.npm_config_userconfig
  }
  const userconfig = process.env.npm_config_userconfig ?? process.env.NPM_CONFIG_USERCONFIG
  if (empty === undefined && userconfig !== undefined && places.holding(resolve(userconfig)) !== undefined) {
    Object.assign(out, privateHomeEnv(privateDir()))
    empty = out.npm_config_userconfig
  }
  const global =
    process.env.npm_config_globalconfig ?? process.env.NPM_CONFIG_GLOBALCONFIG ?? npmGlobalConfig()
  if (places.holding(resolve(global)) !== undefined) {
    if (empty === undefined) {
      empty = join(privateDir(), '.npmrc-global')
      writeFileSync(empty, '', { mode: 0o600 })
    }
    out.npm_config_globalconfig = empty
  }
  return out
}
