// The worker entry as one CommonJS file: used only while no module it was built from is newer,
// and a session of the built package really runs its worker from it.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { packageRoot } from '../../src/util/home.js'
import { BUNDLE, bundleChild, freshBundle } from '../../src/worker/child-bundle.js'

const scratch = mkdtempSync(join(tmpdir(), 'vis-child-bundle-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

const at = (dir: string, file: string, secondsAgo: number) => {
  const t = new Date(Date.now() - secondsAgo * 1000)
  utimesSync(join(dir, file), t, t)
}

test('a bundle is used while every module it lists is no newer than it, never otherwise', () => {
  const dir = join(scratch, 'fresh', 'worker')
  mkdirSync(dir, { recursive: true })
  mkdirSync(join(dir, '..', 'util'))
  assert.equal(freshBundle(dir), undefined, 'no bundle')

  writeFileSync(join(dir, 'child.js'), '')
  writeFileSync(join(dir, '..', 'util', 'home.js'), '')
  writeFileSync(join(dir, BUNDLE), '')
  assert.equal(freshBundle(dir), undefined, 'a bundle without its manifest')

  writeFileSync(join(dir, `${BUNDLE}.json`), JSON.stringify({ inputs: ['child.js', '../util/home.js'] }))
  at(dir, 'child.js', 60)
  at(dir, '../util/home.js', 60)
  at(dir, BUNDLE, 30)
  assert.equal(freshBundle(dir), join(dir, BUNDLE))

  // tsc rewrote one module after the bundle was made: its code is not in the bundle.
  at(dir, '../util/home.js', 0)
  assert.equal(freshBundle(dir), undefined)
  at(dir, '../util/home.js', 60)
  assert.equal(freshBundle(dir), join(dir, BUNDLE))

  rmSync(join(dir, '..', 'util', 'home.js'))
  assert.equal(freshBundle(dir), undefined, 'a module it lists is gone')

  writeFileSync(join(dir, `${BUNDLE}.json`), '{"inputs": []}')
  assert.equal(freshBundle(dir), undefined, 'a manifest that lists nothing')
})

test('the built package starts its workers from the bundle, and they serve blocks', async () => {
  const workerDir = join(packageRoot, 'dist', 'worker')
  assert.ok(existsSync(join(workerDir, 'child.js')), 'the built package is needed: run `npm run build`')
  // What `npm run build` does after tsc.
  const built = await bundleChild(workerDir)
  assert.equal(built.bundle, join(workerDir, BUNDLE))
  assert.equal(freshBundle(workerDir), built.bundle)
  const manifest = JSON.parse(readFileSync(join(workerDir, `${BUNDLE}.json`), 'utf8')) as { inputs: string[] }
  assert.ok(manifest.inputs.includes('child.js'))
  assert.ok(
    !manifest.inputs.some((p) => p.includes('node_modules')),
    'packages stay require()d, not copied in',
  )

  const { createRuntime } = (await import(
    pathToFileURL(join(packageRoot, 'dist', 'sessions', 'runtime.js')).href
  )) as typeof import('../../src/sessions/runtime.js')
  const home = mkdtempSync(join(scratch, 'home-'))
  const root = mkdtempSync(join(scratch, 'root-'))
  const rt = await createRuntime({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [root] })
    const commands = s.processTree().map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'))
    assert.ok(
      commands.some((argv) => argv.includes(built.bundle)),
      `a worker process runs ${built.bundle}: ${JSON.stringify(commands)}`,
    )
    assert.deepEqual(await s.runBlock('x = 6 * 7\nprint(x)'), { stdout: '42\n' })
    assert.deepEqual(await s.runBlock('print(open("f.txt", "w").write("ok"), x)'), { stdout: '2 42\n' })
    assert.equal(readFileSync(join(root, 'f.txt'), 'utf8'), 'ok')
  } finally {
    await rt.close()
  }
})
