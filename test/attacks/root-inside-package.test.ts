// ATTACK (surface 3, roots): a root that lies INSIDE the vis-runtime package (its checkout's
// vis-guest/ or src/, an MCP client narrowing a checkout root to a subdirectory, a session on
// node_modules/vis-runtime/...). The fix for "a root that contains the package" binds the
// package read-only on top of each root that CONTAINS it, and the host file tools refuse every
// write "inside the vis-runtime package, which sessions may read but never change (the host runs
// its code from there)". A root below the package is not covered by the jail: it is bound
// read-write, so guest code writes into the package anyway, even over the distribution of the
// runtime's own minor that the jail binds read-only (the root's read-write bind lands on top).
// Here: roots = <pkg>/vis-guest (the guest runtime every session's worker imports) and each staged
// distribution's site-packages: a `.pth` there runs, unconfined, as the host user, the next time
// anyone runs `vis python` with that minor (checked below: the planted line writes a marker).
// The host's own `write` tool refuses the same path, so the policy is known; on the current code
// the guest's plain open() lands the file and `vis python -c pass` runs it on the host.
// (Same with VIS_PYTHON_HOME: a root inside that external distribution is writable too.)
// Fixed: such a root is refused (policy.root-in-runtime) wherever roots are checked
// (src/confinement/root-guard.ts); a root that CONTAINS the package stays allowed.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createEngine } from '../../src/engine/index.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { isVisError } from '../../src/util/errors.js'
import { python, tempHome } from '../sessions/helpers.js'

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const sitePackages = () =>
  readdirSync(join(PKG, 'cpython-dist'))
    .filter((m) => /^3\.\d+$/.test(m))
    .flatMap((m) => {
      const lib = join(PKG, 'cpython-dist', m, 'linux-x86_64-gnu/python/lib', `python${m}`, 'site-packages')
      return existsSync(lib) ? [lib] : []
    })
const ROOTS = [join(PKG, 'vis-guest'), ...sitePackages()]
const PLANT = '_zz_attack_inside.pth'
const MARKER_DIR = mkdtempSync(join(tmpdir(), 'vis-attack-inside-marker-'))
const MARKER = join(MARKER_DIR, 'host-ran-planted-pth')

let rt: Runtime
const cleanup = () => {
  for (const r of ROOTS) rmSync(join(r, PLANT), { force: true })
}
before(async () => {
  const { home } = tempHome('attack-root-inside-pkg')
  cleanup()
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  cleanup()
  rmSync(MARKER_DIR, { recursive: true, force: true })
})

for (const root of ROOTS) {
  test(`a root inside the package (${root.slice(PKG.length + 1)}) cannot change the package`, async () => {
    const refusal = (e: unknown) =>
      isVisError(e, 'policy.root-in-runtime') &&
      /vis-runtime package/.test((e as Error).message) &&
      /never write there/.test((e as Error).message)
    let s: Awaited<ReturnType<Runtime['createSession']>>
    try {
      s = await rt.createSession({ roots: [root] })
    } catch (err) {
      assert.ok(refusal(err), `refused for another reason: ${err}`)
      assert.ok(!existsSync(join(root, PLANT)))
      return
    }
    try {
      const r = await s.runBlock(
        `import os
p = os.path.join(${JSON.stringify(root)}, ${JSON.stringify(PLANT)})
try:
    with open(p, 'w') as f:
        f.write(${JSON.stringify(`import os; open(${JSON.stringify(MARKER)}, 'w').write('ran')\n`)})
    print('guest-wrote')
except OSError as e:
    print('guest-refused', e)
try:
    await write(${JSON.stringify(PLANT + '.tool')}, 'x')
    print('tool-wrote')
except Exception as e:
    print('tool-refused')
`,
        { timeoutMs: 20_000 },
      )
      assert.match(r.stdout ?? '', /tool-refused/, `setup: the host tool should refuse: ${JSON.stringify(r)}`)
      let ran = ''
      const minor = /cpython-dist\/(3\.\d+)\//.exec(root)?.[1]
      if (minor && existsSync(join(root, PLANT))) {
        // What the next `vis python` of that minor does on the host.
        spawnSync(process.execPath, [join(PKG, 'bin/vis.js'), 'python', '-c', 'pass'], {
          env: { ...process.env, VIS_PYTHON_VERSION: minor },
          timeout: 60_000,
        })
        ran = existsSync(MARKER) ? '; `vis python` then ran the planted .pth on the host' : ''
        rmSync(MARKER, { force: true })
      }
      assert.ok(
        !existsSync(join(root, PLANT)),
        `a block wrote ${join(root, PLANT)} inside the vis-runtime package (${(r.stdout ?? '').trim()})${ran}`,
      )
    } finally {
      await s.dispose()
    }
  })
}

// The engine's own check (createSession before any worker; HTTP answers it with 400).
test('the engine refuses a root inside the package before a worker starts', async () => {
  const { home } = tempHome('attack-root-inside-pkg-engine')
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    await assert.rejects(e.createSession({ roots: [join(PKG, 'vis-guest')] }), (err) =>
      isVisError(err, 'policy.root-in-runtime'),
    )
    // Both directions: a root beside the package (here: a temp dir) is still a root.
    const ok = await e.createSession({ roots: [MARKER_DIR] })
    assert.deepEqual((ok.policy as { roots: string[] }).roots, [MARKER_DIR])
  } finally {
    await e.close()
  }
})

// A root inside an external distribution named by VIS_PYTHON_HOME is refused the same way.
test('a root inside the VIS_PYTHON_HOME distribution is refused', async () => {
  const ext = mkdtempSync(join(tmpdir(), 'vis-attack-inside-exthome-'))
  const site = join(ext, 'lib', 'python3.12', 'site-packages')
  mkdirSync(site, { recursive: true })
  const saved = process.env.VIS_PYTHON_HOME
  process.env.VIS_PYTHON_HOME = ext
  try {
    await assert.rejects(rt.createSession({ roots: [site] }), (err) =>
      isVisError(err, 'policy.root-in-runtime'),
    )
  } finally {
    if (saved === undefined) delete process.env.VIS_PYTHON_HOME
    else process.env.VIS_PYTHON_HOME = saved
    rmSync(ext, { recursive: true, force: true })
  }
})
