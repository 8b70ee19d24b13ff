// ATTACK (surface 8, the Markdown export; a fix that missed its twin): the thirteenth pass found
// that `vis sessions export` spread one argument per backtick run into Math.max to size a fence,
// so a block printing ~150 000 runs made the whole transcript unexportable ("Maximum call stack
// size exceeded"); markdown.ts now counts runs in a loop. The export's own "## Draft" section
// (src/cli/commands/sessions.ts exportSession) still sizes the draft diff's fence the old way,
// `Math.max(3, ...[...diff.matchAll(/`+/g)].map(...))`, and the diff is text the sandbox wrote:
// a session working on a draft writes one file of 150 000 backtick runs (300 KB, well under the
// draft diff's 2 MiB a file) and its transcript, every block of it, can no longer be exported as
// Markdown, which is where a person reviews what the session did before applying its draft.
// Here (a real `vis serve` on loopback, then the real CLI against the same home, as
// test/drafts/http.test.ts does): a draft session runs a block with a marker and one writing the
// file; `vis sessions export` must still write the transcript with its draft. Both directions:
// the JSON export of the same session works today and must keep working.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startServer } from '../../src/http/server.js'
import { newHome, newRepo, python } from '../drafts/helpers.js'
import { client } from '../http/helpers.js'

const vis = fileURLToPath(new URL('../http/fixtures/vis.ts', import.meta.url))

test("a draft file of many backtick runs does not make its session's Markdown export fail", async () => {
  const home = newHome()
  const root = newRepo()
  const out = mkdtempSync(join(tmpdir(), 'vis-attack-export-draft-ticks-'))
  let id: string
  const server = await startServer({ home, python, port: 0, pool: { size: 0 } })
  try {
    const call = client(server.url)
    const s = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(s.status, 201, s.text)
    id = s.body.id
    const made = await call('POST', `/v1/sessions/${id}/draft`, { label: 'ticks' })
    assert.equal(made.status, 201, made.text)
    const first = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: "print('EARLIER-' + 'BLOCK-OUTPUT')",
    })
    assert.equal(first.body.status, 'done', first.text)
    const b = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: "open('ticks.txt', 'w').write('`a' * 150_000 + '\\n')",
    })
    assert.equal(b.body.status, 'done', b.text)
    assert.equal(b.body.error, null, b.text)
  } finally {
    await server.close()
  }
  try {
    const env = { ...process.env, VIS_HOME: home }
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', vis, ...args], {
        env,
        encoding: 'utf8',
        timeout: 120_000,
      })
    // Allowed: the JSON export carries the draft's diff.
    const json = cli('sessions', 'export', id, '--format', 'json', '-o', join(out, 'export.json'))
    assert.equal(json.status, 0, json.stderr)
    assert.match(
      JSON.parse(readFileSync(join(out, 'export.json'), 'utf8')).draft.diff,
      /\+\+\+ b\/ticks\.txt/,
    )
    const file = join(out, 'export.md')
    const md = cli('sessions', 'export', id, '-o', file)
    assert.equal(md.status, 0, `vis sessions export (Markdown) failed: ${md.stderr.slice(0, 400)}`)
    const text = readFileSync(file, 'utf8')
    assert.match(text, /EARLIER-BLOCK-OUTPUT/)
    assert.match(text, /## Draft/)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
