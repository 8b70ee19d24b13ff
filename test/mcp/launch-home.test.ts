// The HOME a stdio MCP server gets (src/mcp-client/server-home.ts). npx, uvx and pip read their user
// configuration from HOME (~/.npmrc's `prefix=` picks what `npx -y` runs), so a server whose HOME a
// sandbox writes gets a private one in the vis home instead; mcp.json's env.HOME outside every root
// gives a real one back, and an env location inside a root is refused. A host whose HOME lies
// outside every root passes its own HOME on unchanged. The attack itself (a planted ~/.npmrc run by
// `npx -y`) is test/attacks/mcp-npx-npmrc-in-home-root.test.ts.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { stdioFixture, tempDir } from './helpers.js'
import { mcpEngine } from './launch-engine.js'

const tsx = import.meta.resolve('tsx')
const fixture = join(import.meta.dirname, 'fixtures', 'home-root-host.ts')

// Runs the fixture with HOME=H (private to its process tree), the session rooted at H/<rel>.
function host(rel: string) {
  const base = realpathSync(tempDir('launch-home'))
  const H = join(base, 'home')
  const realHome = join(base, 'real-home')
  mkdirSync(join(H, rel), { recursive: true })
  mkdirSync(realHome)
  const r = spawnSync(process.execPath, ['--import', tsx, fixture, H, realHome, rel, tsx], {
    cwd: base,
    env: { ...process.env, HOME: H, VIS_HOME: join(H, '.vis') },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<
    string,
    Record<string, string | undefined>
  >
  return { H, realHome, out, stderr: r.stderr }
}

// The private HOME lies in the vis home, or (when the vis home lies in a root too: H/.vis under a
// root at H) in a private folder of the host's temp directory, outside every root: a server's module
// lookup walks every ancestor's node_modules (the twelfth pass planted H/node_modules).
function assertPrivate(
  env: Record<string, string | undefined> | undefined,
  H: string,
  where: 'vis home' | 'temp' = 'vis home',
) {
  const dir = where === 'vis home' ? join(H, '.vis', 'mcp-servers', 'home') : (env?.HOME ?? '')
  if (where === 'temp') {
    assert.match(dir, /\/vis-mcp-home-[^/]+$/)
    assert.ok(!dir.startsWith(`${H}/`), `${dir} lies outside the root ${H}`)
  }
  assert.deepEqual(env, {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    XDG_DATA_HOME: join(dir, '.local', 'share'),
    XDG_CACHE_HOME: join(dir, '.cache'),
    npm_config_userconfig: join(dir, '.npmrc'),
    PYTHONNOUSERSITE: '1',
  })
  assert.equal(statSync(dir).mode & 0o777, 0o700)
  assert.equal(readFileSync(join(dir, '.npmrc'), 'utf8'), '')
  // A vis started as a server takes the private HOME for ~: its ~/.vis is the user's default home.
  assert.equal(readlinkSync(join(dir, '.vis')), join(H, '.vis'))
}

test('a host whose HOME is a session root starts servers with a private HOME; env.HOME outside the roots is kept, inside refused', () => {
  const { H, realHome, out, stderr } = host('')
  assertPrivate(out.plain, H, 'temp')
  assertPrivate(out.again, H, 'temp')
  assert.equal(out.again?.HOME, out.plain?.HOME, 'one private HOME for the process')
  // The vis home H/.vis lies in the root H: servers start in a private folder of the host, not in
  // H/.vis/mcp-servers, whose ancestor H npm would take for a workspace root a block declared
  // (thirteenth pass: test/attacks/mcp-npx-workspace-root-above-server-dir.test.ts).
  const cwd = out.cwd?.plain ?? ''
  assert.match(cwd, /\/vis-mcp-cwd-[^/]+\/mcp-servers$/)
  assert.ok(!cwd.startsWith(`${H}/`), `${cwd} lies outside the root ${H}`)
  assert.equal(out.cwd?.again, cwd, 'one default folder for the process')
  assert.equal(statSync(dirname(cwd)).mode & 0o777, 0o700)
  assert.equal(readFileSync(join(cwd, 'package.json'), 'utf8'), '{"private": true}\n')
  assert.equal(out.realhome?.HOME, realHome)
  assert.equal(out.realhome?.npm_config_userconfig, undefined)
  assert.equal(out.realhome?.PYTHONNOUSERSITE, undefined)
  assert.equal(out.homeinroot?.code, 'mcp.launch-denied')
  assert.match(
    out.homeinroot?.message ?? '',
    /its env\.HOME .*home\/sub lies in the session root .*point HOME in mcp.json at a folder outside every root/,
  )
  assert.equal(out.userconfig?.code, 'mcp.launch-denied')
  assert.match(
    out.userconfig?.message ?? '',
    /its env\.NPM_CONFIG_USERCONFIG .*\.npmrc lies in the session root/,
  )
  // Said once for the process, whatever the number of servers started.
  const notes = stderr.split('\n').filter((l) => l.includes('MCP stdio servers start with HOME='))
  assert.equal(notes.length, 1, stderr)
  assert.ok(notes[0]!.includes(`not ${H}: ${H} lies in the session root ${H}`), notes[0])
  // The note no longer invites setting env.HOME back to the real home (sixteenth outsider pass): it says
  // an explicit HOME is judged the same way, and that this one would be refused.
  assert.match(
    notes[0]!,
    new RegExp(
      `an "env": \\{"HOME": "\\.\\.\\."\\} in mcp.json is judged the same way \\(${H} would be refused\\)`,
    ),
  )
  assert.doesNotMatch(notes[0]!, /to give it a real one/)
})

test("a session root inside HOME's .config (~/.config/uv: uv's own configuration) gives servers a private HOME too", () => {
  const { H, out, stderr } = host(join('.config', 'uv'))
  assertPrivate(out.plain, H)
  // The vis home lies in no root here: servers start in its own folder.
  assert.equal(out.cwd?.plain, join(H, '.vis', 'mcp-servers'))
  assert.equal(out.homeinroot?.code, 'mcp.launch-denied')
  assert.match(
    stderr,
    new RegExp(`the session root ${join(H, '.config', 'uv')} lies in ${join(H, '.config')}`),
  )
})

test('a host whose HOME lies outside every root passes its own HOME to a server, nothing added', async () => {
  const home = tempDir('launch-home-vis')
  const root = tempDir('launch-home-root')
  const engine = await mcpEngine(home, {
    plain: { command: 'node', args: ['--import', tsx, stdioFixture, 'plain'], connect_timeout_ms: 60_000 },
  })
  try {
    const id = (await engine.createSession({ roots: [root] })).id
    const b = (await engine.runBlock(id, { code: 'mcp_plain_pid()', timeout_ms: 120_000 })).block
    assert.equal(b.error, null, JSON.stringify(b.error))
    const env = readFileSync(`/proc/${Number(b.result)}/environ`, 'utf8').split('\0')
    assert.ok(env.includes(`HOME=${process.env.HOME}`), env.join(' '))
    assert.ok(
      !env.some((e) => /^(PYTHONNOUSERSITE|npm_config_userconfig|XDG_CONFIG_HOME)=/.test(e)),
      env.join(' '),
    )
  } finally {
    await engine.close()
  }
})
