// Attack (fifteenth outsider pass; surface: what launch.ts judges of a stdio server: cwd, command, PATH,
// HOME and env, never `args`). SECURITY.md: "The server runs on the host, as the user, outside every jail,
// so no file a sandbox wrote may choose its code", and a command inside a root is refused. But the code an
// interpreter runs is named in `args`: `"command": "node", "args": ["<project>/mcp/server.js"]`, `python3
// <project>/tools/mcp_server.py`, `node --require <project>/hook.js ...` (the very value refused when it
// comes through NODE_OPTIONS). A person's own project MCP server, configured the way every MCP client's
// docs show, lives in the project: with a session on that project the block rewrites it, and the host runs
// the block's code unconfined at the next mcp_connect.
//
// Reproduction: session on W; servers `control` (node, env NODE_OPTIONS=--require W/mcp/hook.js),
// `required` (node, args ["--require", "W/mcp/hook.js", "-e", ...]) and `script` (node, args
// ["W/mcp/server.js"]). The block writes both files (each appends to a marker outside W) and connects all
// three. Expected: all refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-args-')

test('a stdio server whose args name code in a root (a script, --require) is refused', () => {
  const { W, home, outside, marker } = attackFolders(base)
  const keepAlive = ['-e', 'setTimeout(() => {}, 5000)']
  const server = (args: string[], env: Record<string, string> = {}): Server => ({
    command: process.execPath,
    args,
    env,
    timeout_ms: 8_000,
  })
  const plant = (what: string) =>
    `require('node:fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(`${what}, written by the block, run by the host's node\n`)})\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(keepAlive, { NODE_OPTIONS: `--require ${W}/mcp/hook.js` }),
      required: server(['--require', `${W}/mcp/hook.js`, ...keepAlive]),
      script: server([`${W}/mcp/server.js`]),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/mcp', exist_ok=True)",
      `open(W + '/mcp/hook.js', 'w').write(${JSON.stringify(plant('W/mcp/hook.js (args --require)'))})`,
      `open(W + '/mcp/server.js', 'w').write(${JSON.stringify(`${plant('W/mcp/server.js (args script)')}setTimeout(() => {}, 5000)\n`)})`,
      "print('planted')",
      ...connectEach(['control', 'required', 'script']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `NODE_OPTIONS=--require W/... is refused (${out})`)
  const ran = existsSync(marker) ? readFileSync(marker, 'utf8').trim().replace(/\n/g, '; ') : ''
  assert.ok(
    !existsSync(marker),
    `args naming a file in the root passed the launch check (args are not judged) and the host ran the ` +
      `block's code unconfined: ${ran} (${out.slice(0, 600)})`,
  )
  assert.match(out, /required refused mcp\.launch-denied/, out)
  assert.match(out, /script refused mcp\.launch-denied/, out)
})
