// Trusted extensions adding pure-Python modules to the sandbox: a block imports and uses
// one, a reload replaces it, and a declaration that would shadow the runtime or the
// standard library does not load.
import assert from 'node:assert/strict'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { extension, python, tempLayout, write } from './helpers.js'

const { base, home, project, global } = tempLayout('ext-sandbox-modules')
const root = join(base, 'workspace')
mkdirSync(root)

const shim = (greeting: string) =>
  extension(
    'shims',
    `SOURCE = '''\nimport json\n\ndef greet(name):\n    """Greets."""\n    return "${greeting} " + name\n\ndef dumps(x):\n    return json.dumps(x, sort_keys=True)\n'''`,
    ', sandbox_modules={"fakelib": SOURCE, "fakelib.extra": "VALUE = 42\\n"}',
  )

let rt: Runtime | undefined
let reg: ExtensionRegistry | undefined
after(async () => {
  await reg?.close()
  await rt?.close()
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

test('a block imports an extension sandbox module; a reload replaces it', async () => {
  write(join(global, 'shims.py'), shim('hello'))
  rt = await createRuntime({ home, python, pool: { size: 0 }, defaultTools: false })
  reg = await ExtensionRegistry.open({ home, project, python })
  assert.deepEqual(reg.warnings(), [])
  assert.deepEqual(Object.keys(reg.sandboxModules()).sort(), ['fakelib', 'fakelib.extra'])
  const s = await rt.createSession({ roots: [root] })
  await reg.bindInto(s)
  const first = await s.runBlock(
    'import fakelib, fakelib.extra\nprint(fakelib.greet("ada"), fakelib.dumps({"b": 1, "a": 2}), fakelib.extra.VALUE)',
  )
  assert.equal(first.error, undefined, JSON.stringify(first.error))
  assert.equal(first.stdout, 'hello ada {"a": 2, "b": 1} 42\n')

  // Confined like any other code: the module cannot reach outside the roots either.
  const fs = await s.runBlock('import fakelib\nfakelib.json.dump({}, open("/etc/vis-planted.json", "w"))')
  assert.match(
    fs.error?.message ?? '',
    /PermissionError: vis: writing '\/etc\/vis-planted\.json' is not allowed/,
  )

  write(join(global, 'shims.py'), shim('bonjour'))
  await reg.reload()
  assert.deepEqual(reg.warnings(), [])
  await reg.bindInto(s)
  const second = await s.runBlock('import fakelib\nprint(fakelib.greet("ada"))')
  assert.equal(second.stdout, 'bonjour ada\n')

  // An extension without the module: the next import fails as for any missing module.
  write(join(global, 'shims.py'), extension('shims', 'pass'))
  await reg.reload()
  await reg.bindInto(s)
  const gone = await s.runBlock('import fakelib')
  assert.match(gone.error?.message ?? '', /ModuleNotFoundError: No module named 'fakelib'/)
  await s.dispose()
})

test('a sandbox module may not shadow the standard library or the runtime, and must compile', async () => {
  write(join(global, 'bad1.py'), extension('bad1', '', ', sandbox_modules={"json": "x = 1\\n"}'))
  write(join(global, 'bad2.py'), extension('bad2', '', ', sandbox_modules={"vis_guest.x": "x = 1\\n"}'))
  write(join(global, 'bad3.py'), extension('bad3', '', ', sandbox_modules={"ok": "def (:\\n"}'))
  const r = await ExtensionRegistry.open({ home, project, python })
  try {
    const text = JSON.stringify(r.warnings())
    assert.match(text, /sandbox_modules: 'json' would shadow the standard library module 'json'/)
    assert.match(text, /sandbox_modules: 'vis_guest\.x' would shadow the runtime module 'vis_guest'/)
    assert.match(text, /sandbox_modules\['ok'\] does not compile: invalid syntax \(line 1\)/)
  } finally {
    await r.close()
  }
})
