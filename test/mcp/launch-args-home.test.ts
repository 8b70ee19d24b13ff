// The sixteenth outsider pass's launch judgements of a stdio server (src/mcp-client/launch.ts
// stdioLaunch), in both directions, against a real session root (noteSessionRoot marks it as a session
// does) and real folders and links: an argument goes through the same judgement as an env value
// (judge-word.ts: clustered switches, shell patterns, `~user`, `$(...)`) and a relative argument is read
// against every folder the args name (`cd D &&`, `--directory D`, `-C D`, `--prefix D`); an mcp.json
// HOME, XDG_CONFIG_HOME or XDG_DATA_HOME is judged like the inherited HOME (dotfiles and links into a
// root); a root at ~/bin makes HOME unfit; OpenSSH's ~/.ssh in the password database's home is judged
// (sshHomeInRoot). Everyday args (`-y some-server`, `--port 8080`, a script outside every root,
// `bash -lc "npx -y x"`) and a clean explicit HOME still start. The attacks themselves are
// test/attacks/mcp-args-*.test.ts, mcp-env-explicit-home-dotfile-link-into-root,
// mcp-private-home-ssh-reads-passwd-home and mcp-login-shell-home-bin-in-root.
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir, userInfo } from 'node:os'
import { basename, dirname, join, relative } from 'node:path'
import { after, test } from 'node:test'
import { type LaunchConfig, stdioLaunch } from '../../src/mcp-client/launch.js'
import { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { homeInRoot, sshHomeInRoot } from '../../src/util/tool-home.js'
import { writablePlaces } from '../../src/util/writable-roots.js'
import { tempDir } from './helpers.js'

const base = realpathSync(tempDir('launch-args-home'))
after(() => rmSync(base, { recursive: true, force: true }))
const visHome = join(base, 'vis-home')
const parent = join(base, 'projects')
const root = join(parent, 'work')
const outside = join(base, 'outside')
for (const d of [visHome, root, join(root, 'lib'), join(root, 'tools'), outside])
  mkdirSync(d, { recursive: true })
writeFileSync(join(outside, 'server.js'), '')
noteSessionRoot(root)

// 'started' or the refusal's message (always mcp.launch-denied).
function launch(config: Partial<LaunchConfig> & { args?: string[] }): string {
  try {
    stdioLaunch('s', { command: '/bin/sh', env: {}, ...config }, visHome, {})
    return 'started'
  } catch (err) {
    assert.ok(err instanceof VisError, String(err))
    assert.equal(err.code, 'mcp.launch-denied', err.message)
    return err.message
  }
}

test('everyday args, and the same forms outside every root, still start', () => {
  for (const args of [
    ['-y', 'some-server'],
    ['--port', '8080'],
    [join(outside, 'server.js')],
    ['-lc', 'npx -y some-mcp-server'],
    ['-wI', join(outside, 'lib')],
    [`-wI${outside}/lib`, '-MPlanted', '-e', 'sleep(3)'],
    ['-c', `cd ${outside} && . ./env.sh; exec node server.js`],
    ['--directory', outside, 'run', 'server.py'],
    ['-C', parent, 'status'],
    // The root's parent named with words that lie in no root from there.
    ['-c', `cd ${parent} && ls other`],
  ])
    assert.equal(launch({ args }), 'started', JSON.stringify(args))
})

test('clustered switches, patterns, ~user and $(...) in args are refused as they are in env', () => {
  const hook = join(root, 'tools', 'hook.sh')
  const first = hook.indexOf('/', 1)
  const pattern = `${hook.slice(0, first - 1)}?${hook.slice(first)}`
  const cases: [string[], RegExp][] = [
    [[`-wI${root}/lib`, '-MPlanted'], /args\[0\] "-wI.*" names .*lies in the session root/],
    [[`-TCI${root}/lib`], /lies in the session root/],
    [[`-w3I${root}/lib`], /lies in the session root/],
    [['-c', `. ${pattern}`], /holds a shell pattern .* may expand to a path in/],
    [['-c', '. $(cat /etc/where)/hook.sh'], /holds a command substitution/],
  ]
  const rel = relative(realpathSync(homedir()), hook)
  if (!rel.startsWith('..')) cases.push([['-c', `. ~${userInfo().username}/${rel}`], /another user's home/])
  cases.push([['-c', '. ~nobody-here/x'], /names ~nobody-here\/x, another user's home/])
  for (const [args, why] of cases) assert.match(launch({ args }), why, JSON.stringify(args))
})

test('a relative argument is read against every folder the args name', () => {
  const rel = basename(root)
  for (const args of [
    ['-c', `cd ${parent} && . ${rel}/tools/hook.sh`],
    ['--directory', parent, 'run', `${rel}/server.py`],
    ['-C', parent, '-f', `${rel}/Makefile`],
    ['--prefix', parent, 'exec', `${rel}/bin/x`],
    ['-c', `cd ${dirname(parent)} && cd ${basename(parent)} && . ${rel}/tools/hook.sh`],
  ])
    assert.match(launch({ args }), /names .*lies in the session root/, JSON.stringify(args))
})

test('an explicit HOME or XDG folder whose dotfiles or links lead into a root is refused; a clean one starts', () => {
  const user = join(base, 'user')
  const dot = join(user, '.config')
  mkdirSync(dot, { recursive: true })
  symlinkSync(join(root, 'gitconfig'), join(user, '.gitconfig'))
  const data = join(base, 'data')
  mkdirSync(data)
  symlinkSync(join(root, 'share'), join(data, 'applications'))
  const cfg = join(base, 'cfg')
  mkdirSync(cfg)
  symlinkSync(join(root, 'git'), join(cfg, 'git'))
  assert.match(
    launch({ env: { HOME: user } }),
    /its env\.HOME .*gitconfig links to .*which lies in the session root/,
  )
  assert.match(launch({ env: { XDG_CONFIG_HOME: cfg } }), /its env\.XDG_CONFIG_HOME .*git links to/)
  assert.match(launch({ env: { XDG_DATA_HOME: data } }), /its env\.XDG_DATA_HOME .*applications links to/)
  // A root inside an explicit cache folder; a cache's listing is not read for links.
  const cache = join(base, 'cache')
  mkdirSync(cache)
  symlinkSync(root, join(cache, 'linked'))
  assert.equal(launch({ env: { XDG_CACHE_HOME: cache } }), 'started')
  assert.match(
    launch({ env: { XDG_CACHE_HOME: parent } }),
    /its env\.XDG_CACHE_HOME .*the session root .* lies in/,
  )
  const clean = join(base, 'clean-home')
  mkdirSync(join(clean, '.config'), { recursive: true })
  writeFileSync(join(clean, '.gitconfig'), '[user]\n')
  assert.equal(launch({ env: { HOME: clean, XDG_CONFIG_HOME: join(clean, '.config') } }), 'started')
})

test('a root at ~/bin, inside it, or a link in it into a root makes HOME unfit; another bin keeps it', () => {
  const places = () => writablePlaces()
  const at = join(base, 'home-bin-root')
  mkdirSync(join(at, 'bin'), { recursive: true })
  noteSessionRoot(join(at, 'bin'))
  assert.match(homeInRoot(at, places()) ?? '', /bin lies in the session root/)
  const inside = join(base, 'home-bin-inside')
  mkdirSync(join(inside, 'bin', 'w'), { recursive: true })
  noteSessionRoot(join(inside, 'bin', 'w'))
  assert.match(homeInRoot(inside, places()) ?? '', /the session root .* lies in .*bin/)
  const linked = join(base, 'home-bin-link')
  mkdirSync(join(linked, 'bin'), { recursive: true })
  symlinkSync(join(root, 'npx'), join(linked, 'bin', 'npx'))
  assert.match(homeInRoot(linked, places()) ?? '', /npx links to .* which lies in the session root/)
  const fine = join(base, 'home-bin-fine')
  mkdirSync(join(fine, 'bin'), { recursive: true })
  mkdirSync(join(fine, 'src', 'bin'), { recursive: true })
  symlinkSync(join(outside, 'server.js'), join(fine, 'bin', 'tool'))
  symlinkSync(root, join(fine, 'src', 'bin', 'w'))
  assert.equal(homeInRoot(fine, places()), undefined)
})

test("ssh's ~/.ssh in the password database's home is judged: held by a root, holding one, or linking into one", () => {
  const places = () => writablePlaces()
  const pw = join(base, 'pw-root')
  mkdirSync(join(pw, '.ssh'), { recursive: true })
  noteSessionRoot(pw)
  assert.match(sshHomeInRoot(pw, places()) ?? '', /\.ssh lies in the session root/)
  const linked = join(base, 'pw-link')
  mkdirSync(join(linked, '.ssh'), { recursive: true })
  symlinkSync(join(root, 'ssh_config'), join(linked, '.ssh', 'config'))
  assert.match(sshHomeInRoot(linked, places()) ?? '', /config links to .* which lies in the session root/)
  // A root elsewhere under that home (a project, ~/dotfiles with no ~/.ssh link) leaves ssh alone.
  const fine = join(base, 'pw-fine')
  mkdirSync(join(fine, '.ssh'), { recursive: true })
  mkdirSync(join(fine, 'dotfiles'))
  noteSessionRoot(join(fine, 'dotfiles'))
  writeFileSync(join(fine, '.ssh', 'config'), 'Host x\n')
  assert.equal(sshHomeInRoot(fine, places()), undefined)
})
