// Attack (eighteenth outsider pass; surface: checkArgs / folderBases in src/mcp-client/judge-word.ts).
// Since the sixteenth pass a relative word of the args is read against the server's cwd and every folder
// a reading of an argument NAMES (and folders named relatively from those, "in turn"), because the program
// the args start often changes folder first. Two ways a shell changes folder were not read:
//  1. `cd` with no operand goes to $HOME, which no argument names: `bash -c 'cd && . work/tools/hook.sh'`
//     with a session on ~/work sources the block's file, while `cd ~ && ...` is refused;
//  2. folders named relatively from folders named relatively are followed only two steps, so
//     `cd <base> && cd x && cd y && . work/tools/hook.sh` (root <base>/x/y/work) reads `work/...` against
//     <base>/x at most, never <base>/x/y.
// Each time the relative word named no root to the check and bash sourced the root's file on the host.
//
// Reproduction: (1) HOME=H, session on W=H/work, server `/bin/bash -c "cd && . work/tools/hook.sh; ..."`
// (a control `cd ~ && ...` is refused); (2) session on W=<base>/x/y/work, server
// `/bin/bash -c "cd <base> && cd x && cd y && . work/tools/hook.sh; ..."`. The block writes
// W/tools/hook.sh (appends to a marker outside W) and connects. Expected: refused with mcp.launch-denied;
// the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine, type Server } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-args-cd-unnamed-')
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
})

const sleeper = `node -e "setTimeout(() => {}, 3000)"`
const server = (script: string): Server => ({
  command: '/bin/bash',
  args: ['-c', `${script}; ${sleeper}`],
  env: {},
  timeout_ms: 6_000,
})

function plant(W: string, marker: string, how: string): string[] {
  const text = `echo "W/tools/hook.sh, written by the block, sourced on the host by bash after ${how}" >> ${JSON.stringify(marker)}\n`
  return [
    'import os',
    `W = ${JSON.stringify(W)}`,
    "os.makedirs(W + '/tools', exist_ok=True)",
    `open(W + '/tools/hook.sh', 'w').write(${JSON.stringify(text)})`,
    "print('planted')",
  ]
}

test("args whose shell changes to $HOME with a bare `cd` and then name a root's file relatively are refused", () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const H = join(base, 'home')
  const W = join(H, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  process.env.HOME = H
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server('cd ~ && . work/tools/hook.sh'), bare: server('cd && . work/tools/hook.sh') },
    [...plant(W, marker, 'a bare cd'), ...connectEach(['control', 'bare'])],
  )
  assert.match(out, /planted/, out)
  assert.match(
    out,
    /control refused mcp\.launch-denied/,
    `\`cd ~ && . work/tools/hook.sh\` is refused (${out})`,
  )
  assert.equal(
    landed(marker),
    '',
    `args ["-c", "cd && . work/tools/hook.sh; ..."] passed the launch check (a bare cd goes to HOME=${H}, which no ` +
      `argument names) and the host's bash sourced the block's file: ${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /bare refused mcp\.launch-denied/, out)
})

test('args that change folder three times by relative names and then name a root file relatively are refused', () => {
  assert.ok(existsSync('/bin/bash'), 'this test needs bash')
  const top = join(base, 'top')
  const W = join(top, 'x', 'y', 'work')
  const home = join(base, 'vis-home3')
  const outside = join(base, 'outside3')
  for (const d of [W, home, outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server(`cd ${top}/x/y && . work/tools/hook.sh`),
      chain: server(`cd ${top} && cd x && cd y && . work/tools/hook.sh`),
    },
    [...plant(W, marker, 'three relative cds'), ...connectEach(['control', 'chain'])],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `the one-cd form is refused (${out})`)
  assert.equal(
    landed(marker),
    '',
    `args ["-c", "cd ${top} && cd x && cd y && . work/tools/hook.sh; ..."] passed the launch check (folders named ` +
      `relatively are followed two steps) and the host's bash sourced the block's file: ${landed(marker)} ` +
      `(${out.slice(0, 500)})`,
  )
  assert.match(out, /chain refused mcp\.launch-denied/, out)
})
