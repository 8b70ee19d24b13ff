// Attack (sixteenth outsider pass; surface: checkArgs in src/mcp-client/launch.ts).
// checkArgs resolves a relative word from the server's cwd (the vis home's mcp-servers folder), but the
// program the args start often changes folder first: `bash -c "cd /home/me/projects && source
// myproj/.venv/bin/activate && python -m myproj.server"` (the usual way to start a server from a venv),
// `uv --directory /home/me/mcp run tools/server.py` (the MCP docs' own launch line), `git -C DIR`,
// `make -C DIR`, `npm --prefix DIR`. The folder it changes to is the root's parent, which no root holds, and
// the relative word names nothing under the server's cwd, so both pass, while the program opens
// `<parent>/myproj/...`, inside the session root. The same file named by its absolute path is refused.
//
// Reproduction: session on W = <base>/work; servers `control` (args `-c ". W/tools/hook.sh; node ..."`) and
// `relative` (args `-c "cd <base> && . work/tools/hook.sh; node ..."`), command /bin/bash. The block writes
// W/tools/hook.sh (appends to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-args-relative-cd-')

test("args that cd to a root's parent and then name a file in the root relatively are refused", () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const { W, home, outside, marker } = attackFolders(base)
  const sleeper = `node -e "setTimeout(() => {}, 3000)"`
  const server = (script: string): Server => ({
    command: '/bin/bash',
    args: ['-c', `${script}; ${sleeper}`],
    env: {},
    timeout_ms: 6_000,
  })
  const text = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(`. ${W}/tools/hook.sh`),
      relative: server(`cd ${base} && . work/tools/hook.sh`),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/tools', exist_ok=True)",
      `open(W + '/tools/hook.sh', 'w').write(${JSON.stringify(text)})`,
      "print('planted')",
      ...connectEach(['control', 'relative']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `args naming W/tools/hook.sh are refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `args ["-c", "cd ${base} && . work/tools/hook.sh; ..."] passed the launch check (the relative word is ` +
      "resolved from the server's cwd, not the folder the shell changes to) and the host's bash sourced the " +
      `block's file: ${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /relative refused mcp\.launch-denied/, out)
})
