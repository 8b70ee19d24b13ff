// The CLI as it is used day to day in a shell: piped into `head`, and with VIS_HOME set empty.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { runCaptured } from '../distribution/helpers.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const tsx = import.meta.resolve('tsx')
const python = process.env.VIS_PYTHON_VERSION

async function sh(script: string, env: Record<string, string>, cwd: string) {
  const r = await runCaptured('bash', ['-c', `set -o pipefail; ${script}`], {
    cwd,
    env: { ...process.env, VIS: `${process.execPath} --import ${tsx} ${vis}`, ...env },
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('a reader that stops early (| head) ends vis quietly: no EPIPE stack, status 0', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-cli-pipe-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-cli-pipe-root-'))
  // A transcript far larger than a pipe's buffer, so vis is still writing when head leaves.
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  let id: string
  try {
    id = (await engine.createSession({ roots: [root] })).id
    const { block } = await engine.runBlock(id, {
      code: 'for i in range(20000):\n    print("line", i, "x" * 60)',
    })
    assert.equal(block.status, 'done', JSON.stringify(block.error))
  } finally {
    await engine.close()
  }
  const r = await sh(`$VIS sessions export ${id} | head -3`, { VIS_HOME: home }, root)
  assert.equal(r.stdout.split('\n').length, 4, r.stdout)
  assert.doesNotMatch(r.stderr, /EPIPE|Error/, r.stderr)
  assert.equal(r.code, 0, r.stderr)
})

test('an empty VIS_HOME means unset: the state goes to ~/.vis, never into the current directory', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-cli-emptyhome-'))
  const cwd = mkdtempSync(join(tmpdir(), 'vis-cli-emptyhome-cwd-'))
  const r = await sh('$VIS sessions list', { VIS_HOME: '', HOME: home }, cwd)
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(readdirSync(cwd), [], 'nothing is written into the working directory')
  assert.ok(existsSync(join(home, '.vis', 'vis.db')), r.stdout)
  assert.match(r.stdout, new RegExp(`no sessions in ${join(home, '.vis')}`))
})
