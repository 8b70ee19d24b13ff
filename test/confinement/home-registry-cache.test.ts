// The registry of vis homes is read once and then only when its directory changes
// (src/util/home-registry.ts), indexed by src/confinement/protected-homes.ts. A cache must never
// let a sandbox's root reach a home another vis process registered after this process read the
// list: on kernels before 6.13 the directory's mtime comes from a coarse clock, so a registration
// in the same tick as the read can leave it unchanged (6.13+ gives an observed timestamp a fine
// one, so on this machine's kernel a cache keyed on the mtime alone passes too: the cache's
// "settled" rule is what keeps older kernels safe). ATTACK: read the registry (as every jail
// does), register another process's home at once, and open a root inside it and a root around
// it, again and again, so the registrations land in the read's tick. Refused and masked every time.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { homesInside, protectedHomes } from '../../src/confinement/protected-homes.js'
import { checkRootPaths, homeMasksFor } from '../../src/confinement/root-guard.js'
import { isVisError } from '../../src/util/errors.js'
import { registeredHomes, registerHome, registryDir } from '../../src/util/home-registry.js'

// The registry lives in the user's default home: a HOME of the test's own keeps it apart.
const user = mkdtempSync(join(tmpdir(), 'vis-registry-user-'))
process.env.HOME = user
process.on('exit', () => rmSync(user, { recursive: true, force: true }))

const code = (f: () => unknown): string => {
  try {
    f()
  } catch (err) {
    if (isVisError(err)) return err.code
    throw err
  }
  return 'allowed'
}

test('a home registered right after the registry was read is protected at the next check', () => {
  const ws = mkdtempSync(join(tmpdir(), 'vis-registry-ws-'))
  try {
    for (let i = 0; i < 40; i++) {
      const other = join(ws, `home-${i}`)
      mkdirSync(join(other, 'inner'), { recursive: true })
      // The jail's read, then the other process's registration within the same moment.
      protectedHomes()
      registerHome(other)
      assert.equal(
        code(() => checkRootPaths([join(other, 'inner')], {}, { sessionId: 's' })),
        'policy.root-vis-home',
        `round ${i}: a root inside a home registered after the last read was allowed`,
      )
      assert.ok(
        homeMasksFor([ws]).includes(other),
        `round ${i}: the new home is not masked in a root around it`,
      )
    }
    // And the roots beside the homes still open.
    mkdirSync(join(ws, 'plain'))
    assert.equal(typeof checkRootPaths([join(ws, 'plain')], {})[join(ws, 'plain')], 'string')
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
})

test('another process registering a home is seen too, and unchanged reads give the same list', () => {
  const ws = mkdtempSync(join(tmpdir(), 'vis-registry-ws-'))
  try {
    const before = registeredHomes()
    assert.equal(registeredHomes(), before, 'an unchanged registry is not read again')
    const other = join(ws, 'theirs')
    mkdirSync(other)
    // A separate process writes the entry (the real case): this process holds its cache.
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${join(import.meta.dirname, '../../src/util/home-registry.ts')}').then(m => m.registerHome(${JSON.stringify(other)}))`,
      ],
      { env: { ...process.env, HOME: user }, encoding: 'utf8' },
    )
    assert.equal(r.status, 0, r.stderr)
    assert.ok(registeredHomes().includes(other), 'the other process registration is read')
    assert.equal(
      code(() => checkRootPaths([other], {})),
      'policy.root-vis-home',
    )
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
})

test('a registered home that is gone is not masked (no mount point is made for it) and the others stay', () => {
  const ws = mkdtempSync(join(tmpdir(), 'vis-registry-ws-'))
  try {
    const gone = join(ws, 'gone-home')
    const kept = join(ws, 'kept-home')
    mkdirSync(gone)
    mkdirSync(kept)
    registerHome(gone)
    registerHome(kept)
    assert.deepEqual(homesInside(ws).sort(), [gone, kept])
    rmSync(gone, { recursive: true })
    assert.deepEqual(homesInside(ws), [kept])
    assert.deepEqual(homeMasksFor([ws]), [kept])
    assert.equal(existsSync(gone), false)
    // Siblings whose names share the root's characters are not inside it.
    const near = `${ws}-near`
    mkdirSync(near)
    try {
      registerHome(near)
      assert.deepEqual(homesInside(ws), [kept])
      assert.deepEqual(homesInside(near), [near])
    } finally {
      rmSync(near, { recursive: true, force: true })
    }
    assert.ok(readdirSync(registryDir()).length >= 2)
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
})
