// Attack (thirteenth outsider pass; surface 4/6: what a host step LOADS from a place a sandbox writes).
// `vis runtime stage --with PKG --index-url ...` runs `python3 -m pip install --target ...` on the host
// (src/distribution/packages/wheels.ts) with the host's HOME and without -I or PYTHONNOUSERSITE: python3's
// `site` runs the `.pth` files of the user site (~/.local/lib/python3.X/site-packages) at start. The eleventh
// pass gave MCP servers a private HOME and PYTHONNOUSERSITE=1 for exactly this ("npx, uvx and pip read their
// user configuration from HOME"); vis's own pip run keeps the host's. With a session on the person's home
// (the README's "workspace at $HOME", allowed), a block writes ~/.local/lib/python3.X/site-packages/zz.pth and
// the host runs it, unconfined, at the next `vis runtime stage --with`. (The known limit "`vis python` with a
// root at $HOME runs ~/.local .pth files as python3 does" is the person's own python3; this is a step of
// vis's own. pip also reads ~/.config/pip/pip.conf there; with an `--index-url` source its `find-links` would
// add the block's wheels; not shown here, where the source is a directory and the command line's
// --find-links replaces the file's.)
//
// Reproduction: a runtime with a session on H; the block writes H/.local/lib/python3.X/site-packages/zz.pth
// (appending to a marker outside H) for every X; a process with HOME=H runs the wheel step for `tinypkg` from
// a clean wheel directory (fixtures/stage-wheels-host.ts). Expected: the marker is never written; tinypkg
// still lands.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-pip-home-'))
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

test("the wheel step's python3 runs no .pth from a HOME that is a live session root", async () => {
  const H = join(base, 'home')
  const wheels = join(base, 'wheels')
  const site = join(base, 'site-packages')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, wheels, site, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  makeWheel(wheels)
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [H] })
  cleanups.push(() => s.dispose())
  const pth = `import os; open(${JSON.stringify(marker)}, 'a').write('H/.local .pth, planted by the block, run by the host python3 of the wheel step\\n')\n`
  const planted = await s.runBlock(
    [
      'import os',
      `H = ${JSON.stringify(H)}`,
      'for minor in range(8, 15):',
      "    d = f'{H}/.local/lib/python3.{minor}/site-packages'",
      '    os.makedirs(d, exist_ok=True)',
      `    open(d + '/zz-planted.pth', 'w').write(${JSON.stringify(pth)})`,
      "print('planted')",
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, wheels, site], {
    cwd: outside,
    env: { ...process.env, HOME: H, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 180_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { landed: string[]; error?: string }
  assert.ok(
    !existsSync(marker),
    `the wheel step's python3 ran the block's H/.local .pth on the host: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n')[0] : ''} (${JSON.stringify(out)})`,
  )
  assert.ok(out.landed.includes('tinypkg'), `the wheel still installs (${JSON.stringify(out)})`)
})
