// Entries of the vis home's extensions folder that lead into a session root (seventeenth outsider
// pass; src/util/home-files.ts): the registry does not load them, warns with ext.source-writable,
// and a helper module linked into a root is not importable by an extension that does load; a real
// extension and one linked outside every root load as before. A HARD link of a root's file (the
// eighteenth outsider pass) is judged the same: its own name is in the home, its other in the root.
import assert from 'node:assert/strict'
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { closeRegistrationWorkers } from '../../src/extensions/registration.js'
import { ExtensionRegistry } from '../../src/extensions/registry.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { extension, python, tempLayout, write } from './helpers.js'

const { base, home, global } = tempLayout('ext-linked-into-root')
const open: ExtensionRegistry[] = []
after(async () => {
  await Promise.all(open.map((r) => r.close()))
  await closeRegistrationWorkers()
  rmSync(base, { recursive: true, force: true })
})

test('the registry skips entries linked into a session root, and refuses their helpers at import', async () => {
  const root = join(realpathSync(base), 'root')
  const elsewhere = join(realpathSync(base), 'elsewhere')
  mkdirSync(root, { recursive: true })
  mkdirSync(elsewhere, { recursive: true })
  // A root this process's sessions opened (root-guard.ts notes each one the same way).
  noteSessionRoot(root)
  mkdirSync(global, { recursive: true })
  write(join(root, 'planted_ext.py'), extension('planted', 'def p():\n    """P."""\n    return 1'))
  symlinkSync(join(root, 'planted_ext.py'), join(global, 'planted_ext.py'))
  write(join(root, '_helper.py'), 'VALUE = "from the root"\n')
  symlinkSync(join(root, '_helper.py'), join(global, '_helper.py'))
  write(join(elsewhere, 'linked_ext.py'), extension('linked', 'def l():\n    """L."""\n    return 2'))
  symlinkSync(join(elsewhere, 'linked_ext.py'), join(global, 'linked_ext.py'))
  write(join(global, 'own_ext.py'), extension('own', 'def o():\n    """O."""\n    return 3'))
  write(
    join(global, 'uses_helper_ext.py'),
    extension('uses_helper', 'import _helper\n\ndef u():\n    """U."""\n    return _helper.VALUE'),
  )
  const r = await ExtensionRegistry.open({ home, python })
  open.push(r)
  assert.deepEqual(
    r
      .list()
      .map((e) => e.manifest.name)
      .sort(),
    ['linked', 'own'],
  )
  const warnings = r.warnings()
  const byKey = (k: string) => warnings.find((w) => w.key === k)
  assert.equal(byKey('planted_ext')?.code, 'ext.source-writable')
  assert.match(byKey('planted_ext')?.reason ?? '', new RegExp(`${root}.*sandbox can write`))
  assert.equal(byKey('_helper')?.code, 'ext.source-writable')
  assert.match(byKey('uses_helper_ext')?.reason ?? '', /ImportError.*_helper.*ext\.source-writable/)
})

test('the registry skips an extension or helper hard-linked to a file in a session root, with ext.source-writable', async () => {
  const root = join(realpathSync(base), 'root-hard')
  mkdirSync(root, { recursive: true })
  noteSessionRoot(root)
  const home2 = join(realpathSync(base), 'home-hard')
  const global2 = join(home2, 'extensions')
  mkdirSync(global2, { recursive: true })
  write(join(root, 'hard_ext.py'), extension('hard', 'def h():\n    """H."""\n    return 1'))
  linkSync(join(root, 'hard_ext.py'), join(global2, 'hard_ext.py'))
  write(join(root, '_hhelper.py'), 'VALUE = "from the root"\n')
  linkSync(join(root, '_hhelper.py'), join(global2, '_hhelper.py'))
  write(join(global2, 'own_ext.py'), extension('own', 'def o():\n    """O."""\n    return 3'))
  write(
    join(global2, 'uses_hhelper_ext.py'),
    extension('uses_hhelper', 'import _hhelper\n\ndef u():\n    """U."""\n    return _hhelper.VALUE'),
  )
  const r = await ExtensionRegistry.open({ home: home2, python })
  open.push(r)
  assert.deepEqual(
    r.list().map((e) => e.manifest.name),
    ['own'],
  )
  const byKey = (k: string) => r.warnings().find((w) => w.key === k)
  assert.equal(byKey('hard_ext')?.code, 'ext.source-writable')
  // Named by a root on the file's device (the first test's root shares it).
  assert.match(
    byKey('hard_ext')?.reason ?? '',
    new RegExp(
      `hard links\\) on the device of the session root ${realpathSync(base)}/root.*sandbox can write`,
    ),
  )
  assert.equal(byKey('_hhelper')?.code, 'ext.source-writable')
  assert.match(byKey('uses_hhelper_ext')?.reason ?? '', /ImportError.*_hhelper.*ext\.source-writable/)
})
