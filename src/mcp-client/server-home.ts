import { chmodSync, lstatSync, mkdirSync, readlinkSync, renameSync, symlinkSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import { userDefaultHome } from '../util/home-registry.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import { folderInRoot, homeInRoot, placeInRoot, privateHomeEnv, sshHomeInRoot } from '../util/tool-home.js'
import { type WritablePlaces, writablePlaces } from '../util/writable-roots.js'
import { gitIncludesInRoot, includesInRoot, sshIncludesInRoot } from './home-includes.js'
import { rootInside } from './judge-word.js'

export { inRoot } from '../util/tool-home.js'

// The HOME a stdio MCP server gets. npx, uvx, pip and Python read their user configuration from
// HOME before anything else (~/.npmrc's `prefix=` picks the folder whose bin/ `npx -y` runs first,
// ~/.config/uv and pip.conf pick indexes, ~/.local holds Python's user site), so a server whose HOME
// a sandbox writes (a session rooted at $HOME, which the roots allow) runs what a block chose.
// Rather than refuse such a host every stdio server, the server gets a private HOME in the vis home
// (masked in every jail), the XDG folders beneath it, an empty npm user config, no user site and
// the user's own ~/.vis (linkUserVisHome);
// mcp.json's `env.HOME` gives a server a real one back when it passes the same judgement
// (explicitHomeUnfit: sixteenth outsider pass). Tools' caches then start empty (npx downloads again),
// which the stderr note says once. OpenSSH reads ~/.ssh from the password database's home, which no
// HOME changes: that one is judged on its own (explicitHomeUnfit) and a start refused while it is unfit.

const said = new Set<string>()

// A vis run as a server (`vis mcp --root ~`) finds `~` through HOME: with the private one it would
// know neither the user's default vis home nor the homes registry and live jails kept there, so its
// own jails would show the real ~/.vis as an ordinary folder. The private HOME's .vis is therefore a
// link to the user's default home (made 0700 when missing): every vis started as a server shares this
// user's registries and default home, and masks what every other vis process masks.
function linkUserVisHome(dir: string): void {
  const target = userDefaultHome()
  mkdirSync(target, { recursive: true, mode: 0o700 })
  const link = join(dir, '.vis')
  for (;;) {
    try {
      symlinkSync(target, link)
      return
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const st = lstatSync(link, { throwIfNoEntry: false })
    if (st?.isSymbolicLink() && readlinkSync(link) === target) return
    // Something else (a folder an earlier version's server made there, a stale link): the host's
    // own, in a folder no sandbox writes; kept aside, not deleted, and the link made again.
    if (st !== undefined) renameSync(link, `${link}.before-link-${process.pid}-${Date.now()}`)
  }
}

// A private folder of this process in the host's temp directory, one per purpose, made once (0700,
// an unguessable name): makeHostStateDir refuses a temp directory that lies in a root, and a root
// holding it is refused (root-guard.ts), so neither the folder nor any of its ancestors is a
// sandbox's. Its contents last as long as this process. Used when the vis home lies in a root: the
// private HOME (privateHomeDir) and the servers' default cwd (launch.ts).
const hostFolders = new Map<string, string>()
export function hostPrivateFolder(prefix: 'vis-mcp-home-' | 'vis-mcp-cwd-'): string {
  let dir = hostFolders.get(prefix)
  if (dir === undefined) {
    dir = makeHostStateDir(prefix)
    hostFolders.set(prefix, dir)
  }
  return dir
}

// Where the private HOME is: in the vis home, unless that lies in a writable root too (the default
// ~/.vis under a root at ~). Node finds a module a server does not ship in EVERY ancestor's
// node_modules, so a server npx installed under <home>/mcp-servers/home would load a block's
// ~/node_modules/supports-color (twelfth outsider pass). Then a private folder of the host.
function privateHomeDir(visHome: string, places: WritablePlaces): string {
  const inHome = join(visHome, 'mcp-servers', 'home')
  if (places.holding(inHome) === undefined) return inHome
  return hostPrivateFolder('vis-mcp-home-')
}

// Why `home` is no HOME for a program the host runs, if it is not: its shape (util/tool-home.ts
// homeInRoot: where it lies, its dot folders' links at any depth, hard links) and what the files that
// run code by design name by their content (home-includes.ts: shell start files, git config, user-site
// .pth files). The content is read only while a root is open: with none, nothing can be led into.
export function homeUnfit(home: string, places: WritablePlaces): string | undefined {
  return (
    homeInRoot(home, places) ??
    (places.roots.length === 0
      ? undefined
      : includesInRoot(
          home,
          (p) => placeInRoot(p, places),
          (p) => rootInside(p, places),
        ))
  )
}

// The same for the password database's home, where ssh reads ~/.ssh: the folder's shape
// (sshHomeInRoot) and what its config and the files it `Include`s name.
export function sshUnfit(passwdHome: string, places: WritablePlaces): string | undefined {
  const ssh = join(passwdHome, '.ssh')
  return (
    sshHomeInRoot(passwdHome, places) ??
    (places.roots.length === 0
      ? undefined
      : sshIncludesInRoot(ssh, passwdHome, (p) => placeInRoot(p, places)))
  )
}

// Why a server that would inherit the host's HOME (mcp.json gives it none) must get the private one
// instead, if it must (an mcp.json HOME is judged the same way by explicitHomeUnfit, and refused): the whole judgement of util/tool-home.ts's homeInRoot (HOME, the places npx, uvx
// and pip read, and every dotfile and ~/.config entry, links followed at any depth, hard links, and
// what shell start files, git config, user-site .pth files and ssh config name: home-includes.ts). Asked at every start and again
// before each call of a running server (launch.ts judgeRunning): a root opened later at ~/.config or on
// a dotfiles folder changes the answer for a server already running.
export function hostHomeInRoot(env: Record<string, string>, places: WritablePlaces): string | undefined {
  const host = process.env.HOME
  if (env.HOME !== undefined || host === undefined || host === '') return undefined
  return homeUnfit(resolve(host), places)
}

// The variables a server's environment gets for its HOME (none: the host's own HOME, inherited).
// mcp.json's own env locations were judged before (server-env.ts). Runs at every start.
export function serverHomeEnv(
  env: Record<string, string>,
  visHome: string,
  places: WritablePlaces = writablePlaces(),
): Record<string, string> {
  const host = process.env.HOME
  const why = hostHomeInRoot(env, places)
  if (why === undefined) return {}
  const dir = privateHomeDir(visHome, places)
  const vars = privateHomeEnv(dir)
  chmodSync(dir, 0o700)
  linkUserVisHome(dir)
  const key = `${dir}\0${why}`
  if (!said.has(key)) {
    said.add(key)
    // The note does not tell the person to set env.HOME back to this home (sixteenth outsider pass: a
    // real home outside every root whose ~/.gitconfig links into one passed as mcp.json's HOME): an
    // explicit HOME is judged as this one was (explicitHomeUnfit) and refused when it fails.
    process.stderr.write(
      `vis: MCP stdio servers start with HOME=${dir}, not ${host}: ${why}, which a sandbox writes, ` +
        'and npx, uvx, pip, git and shells read their configuration there; an "env": {"HOME": "..."} in mcp.json ' +
        `is judged the same way (${host} would be refused), so give one only to a folder that holds no session ` +
        'root and none of whose dotfiles or links lead into one\n',
    )
  }
  return vars
}

// The XDG base folders a server's tools read instead of HOME's when set (git's $XDG_CONFIG_HOME/git/config,
// uv's and pip's config, data and caches), and whether their listings are read for links (not a cache's).
const XDG_FOLDERS: readonly [name: string, walk: boolean][] = [
  ['XDG_CONFIG_HOME', true],
  ['XDG_DATA_HOME', true],
  ['XDG_CACHE_HOME', false],
]

// The password database's home of the user the host runs as, which OpenSSH reads ~/.ssh from.
function passwdHome(): string | undefined {
  try {
    const dir = userInfo().homedir
    return dir === '' ? undefined : dir
  } catch {
    return undefined
  }
}

// Why a server must not start with the HOME places it would have, if it must not (asked at every start
// and again before each call of a running server, launch.ts): an mcp.json `env.HOME` is judged as the
// inherited one is (util/tool-home.ts homeInRoot: its dotfiles and ~/.config entries, links followed,
// and what its configuration files name),
// and an `XDG_CONFIG_HOME`/`XDG_DATA_HOME`/`XDG_CACHE_HOME` as the folder it names and the links below
// it (sixteenth outsider pass: hostHomeInRoot passed any explicit HOME, and server-env.ts judged these
// values as one path each, so `HOME=<real home>` with ~/.gitconfig -> <root>/gitconfig, or
// `XDG_CONFIG_HOME=~/.config` with ~/.config/git -> <root>/git, ran the block's core.fsmonitor). Such a
// value is refused rather than replaced: the person chose it. And OpenSSH reads ~/.ssh from the
// password database's home whatever HOME is (sshHomeInRoot): the private HOME cannot cover it, so a
// start is refused while a root holds that ~/.ssh or a link there leads into one.
export function explicitHomeUnfit(
  env: Record<string, string>,
  cwd: string,
  places: WritablePlaces,
): string | undefined {
  const home = env.HOME
  if (home !== undefined && home !== '') {
    const why = homeUnfit(resolve(cwd, home), places)
    if (why !== undefined)
      return (
        `its env.HOME ${home} is no HOME for a program the host runs: ${why}, which a sandbox writes (git, ` +
        'shells, npx, uvx and pip read their configuration there); leave HOME out of mcp.json to give the ' +
        'server a private one, or point it at a folder that holds no session root and none of whose dotfiles ' +
        'or links lead into one'
      )
  }
  for (const [name, walk] of XDG_FOLDERS) {
    const value = env[name]
    if (value === undefined || value === '') continue
    const dir = resolve(cwd, value)
    const why =
      folderInRoot(dir, places, walk) ??
      // git reads $XDG_CONFIG_HOME/git/config instead of ~/.config/git/config: its content is read as
      // HOME's is (eighteenth outsider pass: a plain file there `[include]`d a root's gitconfig, whose
      // core.fsmonitor the server's git ran). `~` in it is the HOME the server gets.
      (name === 'XDG_CONFIG_HOME' && places.roots.length > 0
        ? gitIncludesInRoot(join(dir, 'git', 'config'), resolve(cwd, home || process.env.HOME || cwd), (p) =>
            placeInRoot(p, places),
          )
        : undefined)
    if (why !== undefined)
      return (
        `its env.${name} ${value}: ${why}, which a sandbox writes, and the server's tools read their ` +
        `configuration, data or caches there (git's ${name === 'XDG_CONFIG_HOME' ? 'git/config' : 'files'}); ` +
        `leave ${name} out of mcp.json, or point it at a folder that holds no session root and no link into one`
      )
  }
  const pw = passwdHome()
  if (pw !== undefined) {
    const why = sshUnfit(pw, places)
    if (why !== undefined)
      return (
        `ssh (which a server's git, rsync and scp run) reads ~/.ssh from the password database's home ${pw}, ` +
        `not HOME, and ${why}, which a sandbox writes (its config's ProxyCommand and Match exec run on the host); ` +
        'no HOME a server is given changes that: close the session on that root, or keep ~/.ssh out of every root'
      )
  }
  return undefined
}
