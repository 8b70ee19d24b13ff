// Attack (eighteenth outsider pass; surface: the folder-holding-root rule of server-env.ts and the module
// reading of judge-word.ts). Since the seventeenth pass an env value naming a folder that holds a root is
// refused, except `/`, HOME and the folders above it and the cwd ("they commonly hold a project"), and a
// dotted `-m` word is read as module paths against the cwd and the folders the args name. Put together:
// `PYTHONPATH=$HOME` (HOME holds the root ~/work: exempt) and `python3 -m work.tool` (read against the
// server's cwd only: no root) pass, and python imports ~/work/tool.py, the block's module, from the
// exempt folder. What reads below an exempt HOME is exactly what the rule exists for.
//
// Reproduction: HOME=H (no dotfiles), a session on W=H/work; server `python3 -m work.tool` with
// env PYTHONPATH=H (HOME, written out: python expands no variable). The block writes W/tool.py (appends to a marker outside W) and connects.
// A control, the same module by path (`python3 H/work/tool.py`), is refused.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-env-home-pythonpath-')
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
})

test('PYTHONPATH=$HOME with a root below HOME and `python3 -m <root>.<module>` is refused', () => {
  const H = join(base, 'home')
  const W = join(H, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  process.env.HOME = H
  const module = `open(${JSON.stringify(marker)}, 'a').write("W/tool.py, written by the block, imported on the host by python -m work.tool through PYTHONPATH=$HOME\\n")\nimport time\ntime.sleep(3)\n`
  const server = (args: string[], env: Record<string, string>) => ({
    command: 'python3',
    args,
    env,
    timeout_ms: 6_000,
  })
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server([join(W, 'tool.py')], {}),
      module: server(['-m', 'work.tool'], { PYTHONPATH: H }),
    },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/tool.py', 'w').write(${JSON.stringify(module)})`,
      "print('planted')",
      ...connectEach(['control', 'module']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `the module by path is refused (${out})`)
  assert.equal(
    landed(marker),
    '',
    `a server with env PYTHONPATH=$HOME (${H}, exempt as HOME although it holds the session root ${W}) and args ` +
      `["-m", "work.tool"] (read against the cwd only) started, and the host's python imported the block's module: ` +
      `${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /module refused mcp\.launch-denied/, out)
})
