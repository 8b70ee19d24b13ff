// State: the `session` context, the live-vars view, snapshots and restores, and recovery
// from blocks that try to break the runtime from inside.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Guest, type Outcome, startGuest } from './harness.js'

let g: Guest
before(async () => {
  g = await startGuest({ tools: { echo: { fn: (x: unknown) => x, signature: '(x)' } } })
})
after(async () => {
  await g.close()
})

describe('session context', () => {
  test('session is rebound before every block as a real dict', async () => {
    const out = await g.runBlock('print(type(session).__name__, session["user"], session["n"][1])', {
      session: { user: 'ann', n: [1, 2] },
    })
    assert.equal(out.stdout, 'dict ann 2\n')
    await g.runBlock('session = "clobbered"', { session: { a: 1 } })
    const next = await g.runBlock('session', { session: { b: 2 } })
    assert.deepEqual(next.result, { b: 2 })
  })
  test('live vars list exactly what the blocks created; system names are hidden', async () => {
    const fresh = await startGuest({ tools: { echo: (x: unknown) => x } })
    await fresh.runBlock('alpha = 1\ndef beta(): pass\nimport string\necho = 3', { session: { x: 1 } })
    const live = await fresh.call<string[]>('live_vars')
    const system = await fresh.call<string[]>('system_var_names')
    await fresh.close()
    assert.deepEqual(live.sort(), ['alpha', 'beta', 'string'])
    assert.ok(system.includes('session'))
  })
})

describe('snapshots', () => {
  let snap: Outcome['snapshot']
  test('a block outcome carries a snapshot of functions, classes, imports and small constants', async () => {
    const out = await g.runBlock(
      [
        'import json as J',
        'from math import sqrt',
        'LIMIT = 10',
        'NAMES = ["a", "b"]',
        'big = "x" * 100000',
        'handle = __import__("io").StringIO()',
        'echo = "shadow"',
        '@staticmethod',
        'def deco(): pass',
        'def twice(n):',
        '    """Double it."""',
        '    return n * 2 + LIMIT - LIMIT',
        'class Box:',
        '    size = 3',
        'if True:',
        '    def nested_ok():',
        '        return sqrt(J.loads("16"))',
      ].join('\n'),
    )
    assert.equal(out.error, undefined, JSON.stringify(out.error))
    snap = out.snapshot
    const byName = Object.fromEntries((snap?.items ?? []).map((i) => [i.name, i]))
    assert.equal(byName.J?.source, 'import json as J')
    assert.equal(byName.sqrt?.source, 'from math import sqrt')
    assert.equal(byName.LIMIT?.source, 'LIMIT = 10')
    assert.equal(byName.NAMES?.source, "NAMES = ['a', 'b']")
    assert.equal(byName.twice?.kind, 'function')
    assert.match(byName.twice?.source ?? '', /^def twice\(n\):/)
    assert.equal(byName.Box?.kind, 'class')
    assert.equal(byName.nested_ok?.source.startsWith('def nested_ok():'), true)
    assert.equal(byName.big, undefined, 'huge values stay out')
    assert.equal(byName.handle, undefined)
    assert.equal(byName.echo, undefined, 'never tool names')
    assert.equal(byName.session, undefined)
  })
  test('a fresh process restores it through the block rewrite', async () => {
    const fresh = await startGuest({ tools: { echo: (x: unknown) => x } })
    const r = await fresh.call<{ restored: string[]; skipped: string[]; failed: unknown[] }>(
      'restore_defs',
      snap,
    )
    assert.deepEqual(r.failed, [])
    const out = await fresh.runBlock('print(twice(4), Box.size, nested_ok(), LIMIT, NAMES, J.dumps(1))')
    await fresh.close()
    assert.equal(out.stdout, "8 3 4.0 10 ['a', 'b'] 1\n")
  })
  test('restore skips names that are tools now and keeps what loads when part fails', async () => {
    const fresh = await startGuest({ tools: { twice: () => 'tool' } })
    const r = await fresh.call<{ restored: string[]; skipped: string[]; failed: Array<{ name: string }> }>(
      'restore_defs',
      {
        version: 1,
        items: [
          { name: 'missing_mod', kind: 'import', source: 'import no_such_module_xyz' },
          { name: 'twice', kind: 'function', source: 'def twice(n):\n    return n * 2' },
          { name: 'keep', kind: 'function', source: 'def keep():\n    return "kept"' },
        ],
      },
    )
    const out = await fresh.runBlock('print(keep(), await twice())')
    await fresh.close()
    assert.deepEqual(r.skipped, ['twice'])
    assert.deepEqual(
      r.failed.map((f) => f.name),
      ['missing_mod'],
    )
    assert.deepEqual(r.restored, ['keep'])
    assert.equal(out.stdout, 'kept tool\n')
  })
  test('an unparseable snapshot restores nothing and leaves the session usable', async () => {
    const fresh = await startGuest()
    const r = await fresh.call<{ restored: string[]; error?: string }>('restore_defs', {
      version: 1,
      items: [
        { name: 'ok', kind: 'function', source: 'def ok(): return 1' },
        { name: 'bad', kind: 'function', source: 'def bad(:' },
      ],
    })
    const junk = await fresh.call<{ restored: string[]; error?: string }>('restore_defs', 'not a snapshot')
    const out = await fresh.runBlock('print("ok" in globals(), 1 + 1)')
    await fresh.close()
    assert.deepEqual(r.restored, [])
    assert.match(r.error ?? '', /nothing restored/)
    assert.match(junk.error ?? '', /nothing restored/)
    assert.equal(out.stdout, 'False 2\n')
  })
  test('a redefinition replaces the snapshot entry and a deleted name leaves it', async () => {
    await g.runBlock('def twice(n):\n    return n + n')
    await g.runBlock('del Box')
    const snapOut = await g.call<NonNullable<Outcome['snapshot']>>('snapshot_defs')
    const names = snapOut.items.map((i) => i.name)
    assert.ok(!names.includes('Box'))
    assert.match(snapOut.items.find((i) => i.name === 'twice')?.source ?? '', /return n \+ n/)
  })
})

describe('blocks that try to break the runtime', () => {
  test('globals().clear() leaves the next block working', async () => {
    const fresh = await startGuest({ tools: { echo: (x: unknown) => x } })
    await fresh.runBlock('keep = 1\nglobals().clear()')
    const out = await fresh.runBlock('print(await echo("alive"), "keep" in globals(), __name__)', {
      session: { k: 1 },
    })
    const s = await fresh.runBlock('session["k"]', { session: { k: 5 } })
    await fresh.close()
    assert.equal(out.stdout, 'alive False __main__\n')
    assert.equal(s.result, 5)
  })
  test('deleting runtime names recovers for the next block', async () => {
    const out1 = await g.runBlock(
      'import builtins\nfor n in ("doc", "gather", "apropos", "echo", "json", "print", "__vis_set" + "tle__"):\n    delattr(builtins, n)',
    )
    assert.equal(out1.error, undefined)
    const out = await g.runBlock(
      'print(await echo("x"), len(await gather(echo(1))), doc("echo")[:4], json.dumps(1))',
    )
    assert.equal(out.stdout, 'x 1 echo 1\n')
  })
  test('rebinding print (global or builtin) recovers for the next block', async () => {
    await g.runBlock('print = lambda *a, **k: None')
    assert.equal((await g.runBlock('print("back")')).stdout, 'back\n')
    await g.runBlock('import builtins\nbuiltins.print = lambda *a, **k: None')
    assert.equal((await g.runBlock('print("back again")')).stdout, 'back again\n')
  })
  test('replacing sys.stdout inside a block does not lose the next block output', async () => {
    await g.runBlock('import sys, io\nsys.stdout = io.StringIO()')
    assert.equal((await g.runBlock('print("visible")')).stdout, 'visible\n')
  })
})
