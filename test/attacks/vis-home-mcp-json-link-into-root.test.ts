// Attack (seventeenth outsider pass; surface: the vis home's own files, src/engine/mcp-config.ts and
// src/util/home-guard.ts). "The servers in it start on this host: never from a home a running sandbox can
// write": openHome refuses a vis home that lies in a root, but the files IN the home are read wherever they
// lead. People keep their configuration in a dotfiles repository and link it in (`ln -s
// ~/dotfiles/vis/mcp.json ~/.vis/mcp.json`); with a session on that repository the block rewrites
// mcp.json, and the next engine start (any `vis run`, `vis serve`) takes its servers as the person's:
// a stdio server the block named there starts on the host, unconfined, when a block connects it. (The
// launch checks judge only where a server's files lie, not who wrote its entry.)
//
// Reproduction: a vis home whose mcp.json is a link to W/mcp.json (`{"servers": {}}`); engine 1 with a
// session on W, whose block writes W/mcp.json naming a server `/bin/sh -c 'echo ... >> <marker>; sleep 3'`
// (everything outside every root); engine 1 closed; engine 2 on the same home, a session on another
// folder whose block connects that server. Expected: engine 2 does not take a config a sandbox wrote
// (the link refused, or the root refused); the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-home-mcp-json-link-'))
after(() => rmSync(base, { recursive: true, force: true }))

test("a vis home's mcp.json linked into a root does not start the servers a block wrote there", async () => {
  const W = join(base, 'dotfiles')
  const other = join(base, 'other')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, other, home, outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(W, 'mcp.json'), '{"servers": {}}\n')
  symlinkSync(join(W, 'mcp.json'), join(home, 'mcp.json'))
  const config = {
    servers: {
      notes: {
        command: '/bin/sh',
        args: [
          '-c',
          `echo "a server the block wrote into W/mcp.json, started on the host" >> ${marker}; sleep 3`,
        ],
        timeout_ms: 6_000,
      },
    },
  }
  let first = ''
  const e1 = await createEngine({ home, pool: { size: 0 }, extensions: false })
  try {
    const s = await e1.createSession({ roots: [W] })
    const r = await e1.runBlock(s.id, {
      code: `open(${JSON.stringify(join(W, 'mcp.json'))}, 'w').write(${JSON.stringify(JSON.stringify(config))})\nprint('planted')`,
      timeout_ms: 60_000,
    })
    first = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
  } catch (e) {
    first = `refused: ${String(e)}`
  } finally {
    await e1.close()
  }
  let second = ''
  try {
    const e2 = await createEngine({ home, pool: { size: 0 }, extensions: false })
    try {
      const s = await e2.createSession({ roots: [other] })
      const r = await e2.runBlock(s.id, {
        code: "try:\n    print('connected', await mcp_connect('notes'))\nexcept Exception as e:\n    print('refused', getattr(e, 'code', ''), str(e)[:200])",
        timeout_ms: 60_000,
      })
      second = `${r.block.stdout ?? ''} ${JSON.stringify(r.block.error ?? null)}`
    } finally {
      await e2.close()
    }
  } catch (e) {
    second = `refused: ${String(e)}`
  }
  assert.ok(
    !existsSync(marker),
    "the home's mcp.json links into the session root, the block rewrote it, and the next engine started " +
      `the block's server on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} ` +
      `(first engine: ${first.trim().slice(0, 200)}; second: ${second.trim().slice(0, 300)})`,
  )
})
