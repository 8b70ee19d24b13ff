// Code shown to people: `vis sessions export` renders the Markdown transcript with the code
// formatted by ruff, while the JSON export (and the store) keep it exactly as written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { openStore } from '../../src/persistence/index.js'

const home = mkdtempSync(join(tmpdir(), 'vis-format-transcript-'))
const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
after(() => rmSync(home, { recursive: true, force: true }))

const messy = 'def f( a,b ):\n  return a+b\nprint( f(1,2) )'
const broken = 'def g(:\n    pass'

test('the Markdown export shows formatted code; the JSON export and the store keep the original', () => {
  const store = openStore({ home })
  store.sessions.create({ id: 'ses_fmt', policy: { roots: [], network: {}, shell: false } })
  for (const code of [messy, broken]) {
    const { block } = store.blocks.start({ sessionId: 'ses_fmt', code })
    store.blocks.finish(block.id, { stdout: '3\n', durationMs: 1 })
  }
  store.close()
  const env = { ...process.env, VIS_HOME: home }
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', vis, ...args], { env, encoding: 'utf8', timeout: 60_000 })
  const md = cli('sessions', 'export', 'ses_fmt')
  assert.equal(md.status, 0, md.stderr)
  assert.ok(
    md.stdout.includes('```python\ndef f(a, b):\n    return a + b\n\n\nprint(f(1, 2))\n```'),
    md.stdout,
  )
  // Code that does not parse is shown as written.
  assert.ok(md.stdout.includes(`\`\`\`python\n${broken}\n\`\`\``), md.stdout)
  const json = cli('sessions', 'export', 'ses_fmt', '--format', 'json')
  assert.equal(json.status, 0, json.stderr)
  const t = JSON.parse(json.stdout) as { blocks: { code: string }[] }
  assert.deepEqual(
    t.blocks.map((b) => b.code),
    [messy, broken],
  )
  const again = openStore({ home })
  try {
    assert.deepEqual(
      again.blocks.listBySession('ses_fmt').map((b) => b.code),
      [messy, broken],
    )
  } finally {
    again.close()
  }
})
