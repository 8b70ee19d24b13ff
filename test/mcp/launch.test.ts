// Where and what the host starts for a stdio MCP server (src/mcp-client/launch.ts): never from a
// session root, whose files a sandbox writes. A server configured normally still starts, in the vis
// home's mcp-servers/ folder with a PATH cleaned of in-root entries; a command or cwd inside a
// root is refused with its own code, and the planted program never runs.
import assert from 'node:assert/strict'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Engine } from '../../src/engine/index.js'
import { stdioFixture, tempDir } from './helpers.js'
import { blockIn, launchRefusal, mcpEngine } from './launch-engine.js'

const home = tempDir('launch-home')
const root = realpathSync(tempDir('launch-root'))
const outside = tempDir('launch-outside')
const venvBin = join(root, '.venv', 'bin')
// Each planted program writes its own marker outside every root when it runs.
const marker = join(outside, 'planted-ran')
const absMarker = join(outside, 'absolute-ran')
const plantedWriting = (to: string) => `#!/bin/sh\necho "planted ran: $0" > ${JSON.stringify(to)}\n`
const planted = plantedWriting(marker)
// The fixture needs tsx, found from the test's own location: the server's cwd is no longer the repo.
const tsx = import.meta.resolve('tsx')
const savedPath = process.env.PATH
let engine: Engine
const servers = {
  plain: { command: 'node', args: ['--import', tsx, stdioFixture, 'plain'], connect_timeout_ms: 60_000 },
  venv: { command: 'planted-server', args: [] },
  absolute: { command: join(root, 'tools', 'server'), args: [] },
  incwd: { command: 'node', args: ['--import', tsx, stdioFixture, 'incwd'], cwd: join(root, 'sub') },
}

before(async () => {
  // `vis serve` started with the project's virtualenv activated: <root>/.venv/bin leads PATH.
  process.env.PATH = `${venvBin}:${savedPath ?? ''}`
  engine = await mcpEngine(home, servers)
})
after(async () => {
  process.env.PATH = savedPath
  await engine?.close()
})

const block = (id: string, code: string) => blockIn(engine, id, code)
const refusal = (name: keyof typeof servers) => launchRefusal(name, servers[name], 'launch-test', home)

test('a server configured normally starts in <home>/mcp-servers with no in-root PATH entry', async () => {
  const id = (await engine.createSession({ roots: [root] })).id
  const b = await block(id, 'mcp_plain_pid()')
  assert.equal(b.error, null, JSON.stringify(b.error))
  const pid = Number(b.result)
  assert.equal(readlinkSync(`/proc/${pid}/cwd`), realpathSync(join(home, 'mcp-servers')))
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
  const path = env
    .find((e) => e.startsWith('PATH='))!
    .slice(5)
    .split(':')
  assert.ok(path.length > 0 && !path.some((d) => d.startsWith(root)), path.join(':'))
})

test('a command planted in an in-root PATH directory is passed over: mcp.command-missing, never run', async () => {
  const id = (await engine.createSession({ roots: [root] })).id
  const b = await block(
    id,
    [
      'import os',
      `os.makedirs(${JSON.stringify(venvBin)}, exist_ok=True)`,
      `p = ${JSON.stringify(join(venvBin, 'planted-server'))}`,
      `open(p, 'w').write(${JSON.stringify(planted)})`,
      'os.chmod(p, 0o755)',
      "mcp_connect('venv')",
    ].join('\n'),
  )
  assert.equal(existsSync(marker), false, 'the planted command ran on the host')
  assert.equal(await refusal('venv'), 'mcp.command-missing')
  assert.equal(existsSync(marker), false, 'the planted command ran on the host')
  assert.match(b.error!.message, /no program "planted-server" on PATH outside the session roots/)
  assert.match(b.error!.message, new RegExp(`passed over, inside a session root: ${venvBin}`))
})

test('a command given by a path inside a root is refused: mcp.launch-denied, never run', async () => {
  const id = (await engine.createSession({ roots: [root] })).id
  const server = join(root, 'tools', 'server')
  mkdirSync(join(root, 'tools'), { recursive: true })
  writeFileSync(server, plantedWriting(absMarker))
  chmodSync(server, 0o755)
  const b = await block(id, "mcp_connect('absolute')")
  assert.equal(existsSync(absMarker), false, 'the in-root command ran on the host')
  assert.equal(await refusal('absolute'), 'mcp.launch-denied')
  assert.equal(existsSync(absMarker), false, 'the in-root command ran on the host')
  assert.match(
    b.error!.message,
    /its command .* lies in the session root .*install the server outside every root/,
  )
})

test('an explicit cwd inside a root is refused: mcp.launch-denied', async () => {
  const id = (await engine.createSession({ roots: [root] })).id
  const b = await block(id, "mcp_connect('incwd')")
  assert.equal(await refusal('incwd'), 'mcp.launch-denied')
  assert.match(
    b.error!.message,
    /its cwd .*sub lies in the session root .*set "cwd" in mcp.json to a folder outside/,
  )
})
