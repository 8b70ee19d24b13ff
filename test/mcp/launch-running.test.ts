// A running stdio server is judged again before each call (src/mcp-client/launch.ts runningJudge,
// fourteenth outsider pass): when a root opened after its start holds one of its env locations, the
// call fails mcp.launch-denied and the server is stopped; a server whose places lie outside every
// root keeps answering after the same root opens. The attack itself is
// test/attacks/mcp-env-root-opened-after-server-start.test.ts.
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { StdioServerSchema } from '../../src/mcp-client/config.js'
import { ServerConnection } from '../../src/mcp-client/connection.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { stdioFixture, tempDir } from './helpers.js'

const home = realpathSync(tempDir('launch-running-home'))
const later = realpathSync(tempDir('launch-running-later'))
const outside = realpathSync(tempDir('launch-running-outside'))
mkdirSync(join(later, 'plugins'))

const connection = (label: string, env: Record<string, string>) =>
  new ServerConnection(
    label,
    StdioServerSchema.parse({
      command: 'node',
      args: ['--import', import.meta.resolve('tsx'), stdioFixture, label],
      env,
      connect_timeout_ms: 60_000,
    }),
    'launch-running-test',
    undefined,
    home,
  )

test('a running server whose env place lies in a root opened since its start is stopped before the next call', async () => {
  const inLater = connection('inlater', { PYTHONPATH: `${later}/plugins` })
  const elsewhere = connection('elsewhere', { PYTHONPATH: `${outside}/plugins` })
  try {
    await inLater.connect()
    await elsewhere.connect()
    const tool = 'pid'
    // Before the root opens, both answer.
    await inLater.call(tool, {})
    await elsewhere.call(tool, {})
    noteSessionRoot(later)
    await assert.rejects(inLater.call(tool, {}), (err: Error & { code?: string; context?: unknown }) => {
      assert.equal(err.code, 'mcp.launch-denied')
      assert.match(
        err.message,
        new RegExp(`its env\\.PYTHONPATH ${later}/plugins lies in the session root ${later}`),
      )
      assert.match(err.message, /started before that root was opened, and has been stopped/)
      return true
    })
    assert.equal(inLater.state, 'failed')
    // Its next start is refused too while the root stays open.
    await assert.rejects(inLater.call(tool, {}), /mcp\.launch-denied|lies in the session root/)
    // The allowed direction: a server whose places lie outside every root still answers.
    await elsewhere.call(tool, {})
    assert.equal(elsewhere.state, 'connected')
  } finally {
    await inLater.close()
    await elsewhere.close()
  }
})
