// Attack (sixteenth outsider pass; surface: src/mcp-client/server-home.ts serverHomeEnv, util/tool-home.ts).
// When a session's root holds HOME (a workspace at ~) or one of its dot places (~/.ssh), a stdio server gets a
// private HOME, because "git, shells, npx, uvx and pip read their configuration there". OpenSSH does not: it
// finds `~/.ssh/config` (and known_hosts, keys, `Include`d files) in the password database's home (pw_dir),
// never $HOME. So the private HOME leaves every ssh a server runs (git over ssh for a git server's fetch and
// push, rsync, scp) reading the config the block wrote, and `Match exec`, `ProxyCommand`, `LocalCommand` and
// `KnownHostsCommand` run what it says on the host. env-spellings.ts already reads `~` as the password
// database's home too; the HOME remedy does not.
//
// Reproduction (in a private mount namespace, so the host's real home is never touched: /root, the password
// database's home of the user running this test, is a temp folder bound over it; the test asserts it runs
// as a user whose pw_dir is the HOME it binds): session on W = that home; one server, a node process that
// runs `ssh -p 1 127.0.0.1 true` (loopback, nothing listens). The block writes W/.ssh/config with a
// `Match exec` appending to a marker outside W.
// Expected: the server's ssh never reads the block's config; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'vis-attack-mcp-ssh-passwd-home-')))
after(() => rmSync(base, { recursive: true, force: true }))

const fixture = join(import.meta.dirname, 'fixtures', 'outsider14-mcp-host.ts')

test("a server given the private HOME does not run ssh with the block's ~/.ssh/config (the password database's home)", () => {
  for (const tool of ['/usr/bin/ssh', '/usr/bin/unshare'])
    assert.ok(existsSync(tool), `this test needs ${tool}`)
  const passwdHome = userInfo().homedir
  assert.equal(userInfo().uid, 0, 'this test binds a folder over the password-database home: it runs as root')
  const fakeHome = join(base, 'passwd-home')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [fakeHome, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const W = passwdHome
  const sshConfig = `Match exec "echo W/.ssh/config, written by the block, run on the host by ssh in the server with HOME=$HOME >> ${marker}"\n  BatchMode yes\n`
  const client = [
    "require('node:child_process').spawnSync('/usr/bin/ssh', ['-o', 'ConnectTimeout=2', '-p', '1', '127.0.0.1', 'true'], { stdio: 'ignore', timeout: 5000 })",
    'setTimeout(() => {}, 3000)',
  ].join('\n')
  const spec = join(base, 'spec.json')
  writeFileSync(
    spec,
    JSON.stringify({
      servers: { ssh: { command: process.execPath, args: ['-e', client], env: {}, timeout_ms: 7_000 } },
      code: [
        'import os',
        `W = ${JSON.stringify(W)}`,
        "os.makedirs(W + '/.ssh', exist_ok=True)",
        `open(W + '/.ssh/config', 'w').write(${JSON.stringify(sshConfig)})`,
        // ssh refuses a config others may write ("Bad owner or permissions").
        "os.chmod(W + '/.ssh/config', 0o600)",
        "print('planted')",
        'try:',
        "    print('ssh ok', await mcp_connect('ssh'))",
        'except Exception as e:',
        "    print('ssh refused', getattr(e, 'code', ''), str(e)[:300])",
      ].join('\n'),
    }),
  )
  const r = spawnSync(
    '/usr/bin/unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      'mount --bind "$0" "$1" && shift && exec "$@"',
      fakeHome,
      passwdHome,
      process.execPath,
      '--import',
      import.meta.resolve('tsx'),
      fixture,
      W,
      home,
      spec,
    ],
    {
      cwd: outside,
      env: { ...process.env, HOME: passwdHome, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 240_000,
    },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /planted/, out)
  assert.match(
    r.stderr,
    /MCP stdio servers start with HOME=/,
    `the server got the private HOME (${r.stderr.slice(0, 400)})`,
  )
  assert.ok(
    !existsSync(marker),
    `the server started with the private HOME (its HOME ${passwdHome} lies in the session root), yet its ssh ` +
      "read the password database's home, where the block wrote .ssh/config, and ran its Match exec: " +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
})
