// Attack (thirteenth outsider pass; surface: what the host RUNS from a place a sandbox writes, around the
// twelfth pass's wheel step). `vis runtime stage --with PKG --index-url ...` runs pip on the host as
// `python3 -m pip ...` (src/distribution/packages/wheels.ts findPip and installWheels, through run(), which
// passes no cwd and no -I/-P). `python3 -m` puts the CURRENT DIRECTORY first on sys.path, so the `pip` it
// runs is the first one found there: the person runs `npx vis runtime stage ...` in their project (where
// vis-runtime is installed, as the README shows), and while a session is live on that project a block
// writes W/pip/__main__.py; the host's python3 runs it, unconfined, before pip ever looks at a wheel (the
// wheels themselves come from a clean directory outside every root here). The guest bytecode compile and
// compileall runs pass -I for this reason; this step does not.
//
// Reproduction: a runtime with a session on W; the block writes W/pip/__init__.py and W/pip/__main__.py
// (appending a line to a marker outside W); the wheel step (fixtures/stage-wheels-host.ts, installWheels
// for `tinypkg` from a wheel directory outside W) runs as its own process with its cwd W. Expected: the
// marker is never written (pip is the interpreter's own, or the step is refused).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-pip-cwd-'))
const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'stage-wheels-host.ts')

function makeWheel(dir: string): void {
  const py = [
    'import sys, zipfile',
    "z = zipfile.ZipFile(sys.argv[1] + '/tinypkg-1.0-py3-none-any.whl', 'w')",
    "z.writestr('tinypkg/__init__.py', 'X = 1\\n')",
    "z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')",
    "z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
    "z.writestr('tinypkg-1.0.dist-info/RECORD', '')",
    'z.close()',
  ].join('\n')
  const r = spawnSync('python3', ['-c', py, dir], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
}

test("the wheel step's `python3 -m pip` does not run a pip a block planted in the cwd", async () => {
  const W = join(base, 'work')
  const wheels = join(base, 'wheels')
  const site = join(base, 'site-packages')
  const home = join(base, 'home')
  const outside = join(base, 'outside')
  for (const d of [W, wheels, site, home, outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  makeWheel(wheels)
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [W] })
  cleanups.push(() => s.dispose())
  const main = `import os, sys\nopen(${JSON.stringify(marker)}, 'a').write('the block\\'s pip/__main__.py, run by the host: ' + ' '.join(sys.argv[1:3]) + ' cwd=' + os.getcwd() + '\\n')\nsys.exit(0)\n`
  const planted = await s.runBlock(
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/pip', exist_ok=True)",
      "open(W + '/pip/__init__.py', 'w').write('')",
      `open(W + '/pip/__main__.py', 'w').write(${JSON.stringify(main)})`,
      "print('planted')",
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, wheels, site], {
    cwd: W,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 180_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  assert.ok(
    !existsSync(marker),
    `the wheel step, started in W, ran the block's W/pip/__main__.py on the host: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (step's output: ${r.stdout.trim().slice(0, 300)})`,
  )
})
