// The worker entry as one CommonJS file: used only while no module it was built from is newer,
// and a session of the built package really runs its worker from it.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { packageRoot } from '../../src/util/home.js'
import { BUNDLE, bundleChild, freshBundle } from '../../src/worker/child-bundle.js'

const scratch = mkdtempSync(join(tmpdir(), 'vis-child-bundle-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

test('a bundle is used while it and every module it lists are as its manifest says, never otherwise', () => {
  const dir = join(scratch, 'fresh', 'worker')
  mkdirSync(dir, { recursive: true })
  mkdirSync(join(dir, '..', 'util'))
  assert.equal(freshBundle(dir), undefined, 'no bundle')

  writeFileSync(join(dir, 'child.js'), 'child')
  writeFileSync(join(dir, '..', 'util', 'home.js'), 'home')
  writeFileSync(join(dir, BUNDLE), 'bundle')
  assert.equal(freshBundle(dir), undefined, 'a bundle without its manifest')

  const manifest = {
    bundle: sha256('bundle'),
    inputs: [
      { path: 'child.js', sha256: sha256('child') },
      { path: '../util/home.js', sha256: sha256('home') },
    ],
  }
  writeFileSync(join(dir, `${BUNDLE}.json`), JSON.stringify(manifest))
  assert.equal(freshBundle(dir), join(dir, BUNDLE))

  // tsc rewrote one module after the bundle was made: its code is not in the bundle. Its
  // time says nothing (npm gives an installed package's files the time of extraction).
  writeFileSync(join(dir, '..', 'util', 'home.js'), 'home, edited')
  assert.equal(freshBundle(dir), undefined)
  writeFileSync(join(dir, '..', 'util', 'home.js'), 'home')
  const later = new Date(Date.now() + 60_000)
  utimesSync(join(dir, '..', 'util', 'home.js'), later, later)
  assert.equal(freshBundle(dir), join(dir, BUNDLE), 'same contents, newer mtime: still fresh')

  writeFileSync(join(dir, BUNDLE), 'another bundle')
  assert.equal(freshBundle(dir), undefined, 'a bundle that is not the one the manifest describes')
  writeFileSync(join(dir, BUNDLE), 'bundle')

  rmSync(join(dir, '..', 'util', 'home.js'))
  assert.equal(freshBundle(dir), undefined, 'a module it lists is gone')

  writeFileSync(join(dir, `${BUNDLE}.json`), JSON.stringify({ ...manifest, inputs: [] }))
  assert.equal(freshBundle(dir), undefined, 'a manifest that lists nothing')
})

test('the built package starts its workers from the bundle, and they serve blocks', async () => {
  const workerDir = join(packageRoot, 'dist', 'worker')
  assert.ok(existsSync(join(workerDir, 'child.js')), 'the built package is needed: run `npm run build`')
  // What `npm run build` does after tsc.
  const built = await bundleChild(workerDir)
  assert.equal(built.bundle, join(workerDir, BUNDLE))
  assert.equal(freshBundle(workerDir), built.bundle)
  const manifest = JSON.parse(readFileSync(join(workerDir, `${BUNDLE}.json`), 'utf8')) as {
    inputs: { path: string }[]
  }
  const paths = manifest.inputs.map((i) => i.path)
  assert.ok(paths.includes('child.js'))
  assert.ok(!paths.some((p) => p.includes('node_modules')), 'packages stay require()d, not copied in')

  const { createRuntime } = (await import(
    pathToFileURL(join(packageRoot, 'dist', 'sessions', 'create-runtime.js')).href
  )) as typeof import('../../src/sessions/create-runtime.js')
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
