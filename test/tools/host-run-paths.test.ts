// What the host runs unconfined never changes through the host file tools, even inside a root:
// a CPython distribution named by VIS_PYTHON_HOME (a .pth in its site-packages runs in `vis python`)
// and a project's .vis folder (its extensions load on the host). Both refused with
// tool.read-only-path; the rest of the root stays writable.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { resolveDistribution } from '../../src/distribution/resolve.js'
import { mutateTools } from '../../src/tools/fs/mutate.js'
import { patchTool } from '../../src/tools/fs/patch.js'
import type { Tool } from '../../src/tools/types.js'
import { call, context, files, guardFor, rejection, tempDir } from './helpers.js'

const saved = process.env.VIS_PYTHON_HOME
const savedTools = process.env.VIS_TOOLS_PYTHON
// The syntax check of a patched .py file borrows a python: the real one, named before the tests
// point VIS_PYTHON_HOME at a fake distribution (there is no fixed fallback).
process.env.VIS_TOOLS_PYTHON = (await resolveDistribution({ allowDownload: false })).executable
after(() => {
  if (saved === undefined) delete process.env.VIS_PYTHON_HOME
  else process.env.VIS_PYTHON_HOME = saved
  if (savedTools === undefined) delete process.env.VIS_TOOLS_PYTHON
  else process.env.VIS_TOOLS_PYTHON = savedTools
})

async function setup() {
  const ws = await tempDir()
  await files(ws, {
    'dist/lib/python3.11/site-packages/README.txt': 'site\n',
    'dist/bin/keep.txt': 'k\n',
    'app/.vis/extensions/tool.py': 'print(1)\n',
    'app/main.py': 'x = 1\n',
  })
  process.env.VIS_PYTHON_HOME = join(ws, 'dist')
  const guard = guardFor([ws])
  const t = Object.fromEntries(mutateTools(guard).map((x) => [x.name, x])) as Record<string, Tool>
  return { ws, t, patch: patchTool(guard), ctx: context([ws]) }
}

test('every changing host tool refuses a path inside a distribution the host runs', async () => {
  const { ws, t, patch, ctx } = await setup()
  const pth = 'dist/lib/python3.11/site-packages/zz.pth'
  const refusals = [
    () => call(t.write!, ctx, pth, 'import os\n'),
    () =>
      call(patch, ctx, [
        { path: 'dist/lib/python3.11/site-packages/README.txt', search: 'site', replace: 'x' },
      ]),
    () => call(t.create_dirs!, ctx, 'dist/lib/python3.11/site-packages/evil'),
    () => call(t.move!, ctx, 'app/main.py', pth),
    () => call(t.delete!, ctx, 'dist/bin/keep.txt'),
    // Renaming the distribution away would let a fresh one be planted where the host looks.
    () => call(t.move!, ctx, 'dist', 'elsewhere'),
    () => call(t.delete!, ctx, 'dist', { recursive: true }),
  ]
  for (const r of refusals) {
    const err = await rejection(Promise.resolve().then(r))
    assert.equal(err.code, 'tool.read-only-path', err.message)
    assert.match(err.message, /CPython distribution the host runs/)
  }
  assert.equal(existsSync(join(ws, pth)), false)
  assert.equal(existsSync(join(ws, 'dist/bin/keep.txt')), true)
  assert.equal(await readFile(join(ws, 'dist/lib/python3.11/site-packages/README.txt'), 'utf8'), 'site\n')
})

test('a native addon directory the host loads (VIS_ADDON_DIR) inside a root is refused too', async () => {
  const { ws, t, ctx } = await setup()
  await files(ws, { 'addons/vis_python.node': 'elf\n' })
  const saved = process.env.VIS_ADDON_DIR
  process.env.VIS_ADDON_DIR = join(ws, 'addons')
  try {
    for (const r of [
      () => call(t.write!, ctx, 'addons/vis_python.node', 'planted'),
      () => call(t.move!, ctx, 'addons', 'addons-old'),
    ]) {
      const err = await rejection(Promise.resolve().then(r))
      assert.equal(err.code, 'tool.read-only-path', err.message)
      assert.match(err.message, /code the host loads/)
    }
    assert.equal(await readFile(join(ws, 'addons/vis_python.node'), 'utf8'), 'elf\n')
  } finally {
    if (saved === undefined) delete process.env.VIS_ADDON_DIR
    else process.env.VIS_ADDON_DIR = saved
  }
})

test("every changing host tool refuses a path inside a project's .vis folder", async () => {
  const { ws, t, patch, ctx } = await setup()
  const refusals = [
    () => call(t.write!, ctx, 'app/.vis/extensions/planted.py', 'import os\n'),
    () => call(t.write!, ctx, '.vis/extensions/planted.py', 'import os\n'),
    () =>
      call(patch, ctx, [{ path: 'app/.vis/extensions/tool.py', search: 'print(1)', replace: 'print(2)' }]),
    () => call(t.create_dirs!, ctx, 'other/.vis/extensions'),
    () => call(t.move!, ctx, 'app/main.py', 'app/.vis/extensions/main.py'),
    () => call(t.move!, ctx, 'app/.vis', 'app/old-vis'),
    () => call(t.delete!, ctx, 'app/.vis/extensions/tool.py'),
  ]
  for (const r of refusals) {
    const err = await rejection(Promise.resolve().then(r))
    assert.equal(err.code, 'tool.read-only-path', err.message)
    assert.match(err.message, /\.vis folder/)
  }
  assert.equal(existsSync(join(ws, '.vis')), false)
  assert.equal(existsSync(join(ws, 'other/.vis')), false)
  assert.equal(await readFile(join(ws, 'app/.vis/extensions/tool.py'), 'utf8'), 'print(1)\n')
})

test('the rest of the root stays writable beside them', async () => {
  const { ws, t, patch, ctx } = await setup()
  assert.equal((await call(t.write!, ctx, 'app/new.py', 'y = 2\n')).created, true)
  await call(patch, ctx, [{ path: 'app/main.py', search: 'x = 1', replace: 'x = 3' }])
  assert.equal(await readFile(join(ws, 'app/main.py'), 'utf8'), 'x = 3\n')
  // Names that only resemble the protected ones are ordinary.
  await call(t.write!, ctx, 'app/.vis-notes/a.txt', 'a\n')
  await call(t.write!, ctx, 'distribution/lib/x.pth', 'plain\n')
  assert.deepEqual(await call(t.create_dirs!, ctx, 'dist2/lib'), { path: 'dist2/lib', created: true })
  await call(t.move!, ctx, 'app/new.py', 'app/moved.py')
  await call(t.delete!, ctx, 'app/moved.py')
  assert.equal(existsSync(join(ws, 'app/moved.py')), false)
})
