// Attack (sixteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts).
// bash imports every variable named `BASH_FUNC_<name>%%` whose value starts `() {` as a function (the
// shellshock-era "exported function" format, still how `export -f` passes a function to a child bash),
// and a function shadows the program of the same name for every command the script runs. Its value is
// code, yet the name carries none of the rule's words (no PATH, ENV, SHELL, SCRIPT...), so its value is
// never read: `BASH_FUNC_node%%='() { . W/tools/hook.sh; command node "$@"; }'` starts, and the first
// `node` the server's bash script runs sources the block's file on the host. The same file given through
// BASH_ENV is refused.
//
// Reproduction: session on W; servers `control` (env BASH_ENV=W/tools/hook.sh) and `function` (env
// BASH_FUNC_node%% sourcing W/tools/hook.sh), each `/bin/bash -c 'node -e "setTimeout(...)"'`. The block
// writes W/tools/hook.sh (appends to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
// The fix refuses an env key that is no portable variable name where the servers are read
// (src/mcp-client/config.ts; `BASH_FUNC_x%%` is code, not a setting), a config error before any server
// starts, so the block that would connect `function` never runs: the test checks that refusal both ways
// the engine reads servers (mcp.json, and servers given in code) and runs the block with `control` alone.
// The value itself is judged too, whatever the name (server-env.ts; test/mcp/launch-env.test.ts).
// (Fixer fx16d: the attack's own form expected the refusal at mcp_connect, which a config error cannot give.)
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadMcpConfig } from '../../src/engine/mcp-config.js'
import { VisError } from '../../src/util/errors.js'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-bash-func-')

test('an exported bash function (BASH_FUNC_<name>%%) sourcing a file in a root is refused', () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (env: Record<string, string>): Server => ({
    command: '/bin/bash',
    args: ['-c', `node -e "setTimeout(() => {}, 3000)"`],
    env,
    timeout_ms: 6_000,
  })
  const hook = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash" >> ${JSON.stringify(marker)}\n`
  const servers = {
    control: server({ BASH_ENV: `${W}/tools/hook.sh` }),
    function: server({ 'BASH_FUNC_node%%': `() { . ${W}/tools/hook.sh; command node "$@"; }` }),
  }
  // mcp.json holding the exported function: the whole file is refused, naming the key.
  const fileHome = join(base, 'vis-home-file')
  mkdirSync(fileHome)
  writeFileSync(join(fileHome, 'mcp.json'), JSON.stringify({ servers }))
  assert.throws(
    () => loadMcpConfig(fileHome),
    (err: unknown) =>
      err instanceof VisError &&
      err.code === 'mcp.config' &&
      err.message.includes('servers.function.env.BASH_FUNC_node%%: an env name is letters, digits and "_"'),
    'an mcp.json env key BASH_FUNC_node%% is refused when the file is read',
  )
  // The same servers given to the engine in code: the session's servers are refused, none started.
  const spec = join(base, 'spec-function.json')
  writeFileSync(spec, JSON.stringify({ servers, code: connectEach(['control', 'function']).join('\n') }))
  const fixture = join(import.meta.dirname, 'fixtures', 'outsider14-mcp-host.ts')
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, W, home, spec], {
    cwd: outside,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 240_000,
  })
  assert.notEqual(r.status, 0, `${r.stdout}\n${r.stderr}`)
  assert.ok(r.stderr.includes('function.env.BASH_FUNC_node%%: an env name'), r.stderr)
  const out = runEngine(base, W, home, outside, { control: servers.control }, [
    'import os',
    `W = ${JSON.stringify(W)}`,
    "os.makedirs(W + '/tools', exist_ok=True)",
    `open(W + '/tools/hook.sh', 'w').write(${JSON.stringify(hook)})`,
    "print('planted')",
    ...connectEach(['control']),
  ])
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `BASH_ENV=W/tools/hook.sh is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env BASH_FUNC_node%%="() { . W/tools/hook.sh; ... }" passed the launch check (the name has none of the ' +
      "rule's words, so its value was never read) and the host's bash sourced the block's file: " +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
})
