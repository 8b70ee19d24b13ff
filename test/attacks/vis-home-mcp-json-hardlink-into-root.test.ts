// Attack (eighteenth outsider pass; surface: the vis home's own files, src/util/home-files.ts readHomeFile).
// Since the seventeenth pass `<home>/mcp.json` is refused (`home.file-writable`) "when a link or the opened
// file lies where a sandbox writes": each symbolic link on the way and the opened fd's real path are judged.
// A HARD link is neither: `ln ~/dotfiles/vis/mcp.json ~/.vis/mcp.json` (a dotfile manager's hard-link mode,
// or `ln` without -s) makes the home's mcp.json and W/mcp.json one inode whose real path is in the home. The
// HOME walk already counts such a file (more than one name on a root's device) as a root's since the
// seventeenth pass; the vis home's reader does not. The block rewrites W/mcp.json in place (past the audit
// hook's many-link refusal by the same rename race as mcp-home-dotfile-hardlink-into-root), and an engine
// started while that session still runs takes the block's server as the person's and starts it on the host.
//
// Reproduction: a vis home whose mcp.json is a hard link of W/mcp.json (`{"servers": {}}`); engine 1 with
// a session on W, whose block rewrites W/mcp.json in place naming a server `/bin/sh -c 'echo ... >> <marker>'`;
// while engine 1 and its session still run (W is writable now), engine 2 on the same home, a session on
// another folder whose block connects that server. Expected: engine 2 refuses the file
// (home.file-writable) or starts nothing from it; the marker never written.
import assert from 'node:assert/strict'
import { linkSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { attackBase, landed } from './outsider14-run.js'

const base = attackBase('vis-attack-home-mcp-json-hardlink-')

test("a vis home's mcp.json hard-linked to a root's file does not start the servers a block wrote there", async () => {
  const W = join(base, 'dotfiles')
  const other = join(base, 'other')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, other, home, outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'mcp.json'), '{"servers": {}}\n')
  linkSync(join(W, 'mcp.json'), join(home, 'mcp.json'))
  const config = {
    servers: {
      notes: {
        command: '/bin/sh',
        args: [
          '-c',
          `echo "a server the block wrote into W/mcp.json (hard-linked), started on the host" >> ${marker}; sleep 3`,
        ],
        timeout_ms: 6_000,
      },
    },
  }
  const plant = [
    'import os, threading',
    `W = ${JSON.stringify(W)}`,
    `text = ${JSON.stringify(JSON.stringify(config))}`,
    // The audit hook refuses opening a many-link file for writing: a Python-level stat before the
    // kernel's open, passed by swapping the name with a one-link file between the two.
    "open(W + '/plain', 'w').write('x')",
    'stop = False',
    'def swap():',
    '    while not stop:',
    '        try:',
    "            os.rename(W + '/mcp.json', W + '/held')",
    "            os.rename(W + '/plain', W + '/mcp.json')",
    "            os.rename(W + '/mcp.json', W + '/plain')",
    "            os.rename(W + '/held', W + '/mcp.json')",
    '        except OSError:',
    '            pass',
    't = threading.Thread(target=swap)',
    't.start()',
    'landed = 0',
    'for i in range(200000):',
    '    try:',
    "        f = open(W + '/mcp.json', 'r+')",
    '    except OSError:',
    '        continue',
    '    if os.fstat(f.fileno()).st_nlink > 1:',
    '        f.truncate(0)',
    '        f.write(text)',
    '        f.close()',
    '        landed = i + 1',
    '        break',
    '    f.close()',
    'stop = True',
    't.join()',
    "print('landed after', landed, 'tries')",
  ].join('\n')
  let first = ''
  let second = ''
  let e1: Awaited<ReturnType<typeof createEngine>>
  try {
    e1 = await createEngine({ home, pool: { size: 0 }, extensions: false })
  } catch (e) {
    // The suite runs files side by side: another process's live jail with a root on this device
    // makes the two-named mcp.json unfit already at the first engine's start, for the fix's own
    // reason (the same refusal the second engine gives), and there is nothing left to attack.
    assert.equal((e as { code?: string }).code, 'home.file-writable', String(e))
    assert.match(String(e), /hard link/, String(e))
    assert.equal(landed(marker), '')
    return
  }
  try {
    const s1 = await e1.createSession({ roots: [W] })
    const r = await e1.runBlock(s1.id, { code: plant, timeout_ms: 120_000 })
    first = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
    try {
      const e2 = await createEngine({ home, pool: { size: 0 }, extensions: false })
      try {
        const s = await e2.createSession({ roots: [other] })
        const r2 = await e2.runBlock(s.id, {
          code: "try:\n    print('connected', await mcp_connect('notes'))\nexcept Exception as e:\n    print('refused', getattr(e, 'code', ''), str(e)[:200])",
          timeout_ms: 60_000,
        })
        second = `${r2.block.stdout ?? ''} ${JSON.stringify(r2.block.error ?? null)}`
      } finally {
        await e2.close()
      }
    } catch (e) {
      second = `refused: ${String(e)}`
    }
  } finally {
    await e1.close()
  }
  assert.match(first, /landed after [1-9]/, `the block rewrote W/mcp.json in place (${first.slice(0, 300)})`)
  assert.equal(
    landed(marker),
    '',
    "the home's mcp.json is a hard link of the session root's W/mcp.json, the block rewrote it, and an engine " +
      `started while that session ran took the block's server and started it on the host: ${landed(marker)} ` +
      `(first engine: ${first.trim().slice(0, 200)}; second: ${second.trim().slice(0, 300)})`,
  )
})
