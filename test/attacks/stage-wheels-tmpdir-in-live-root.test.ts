// Attack (twelfth outsider pass; surface: the eleventh pass's `confine.tmpdir-in-root`, SECURITY.md Roots:
// "In the other order (a session already live on W, then a vis process whose TMPDIR lies in W) the host
// makes no state folder there"). That refusal covers makeHostStateDir's folders only. `vis runtime stage
// --with PKG` installs wheels with pip into mkdtemp(os.tmpdir()/vis-wheels-*) and then MOVES everything it
// finds there (leaving out only bin/ and *.pth) into the distribution's site-packages, the tree the host
// runs unconfined (`vis python`, the trusted extension worker, layout.py) and every worker imports. With
// TMPDIR inside a live session's root (TMPDIR=~/tmp and a session on ~, the eleventh pass's set-up), a block
// of that session watches the folder and drops a sitecustomize.py into vis-wheels-* while pip runs: it lands
// in site-packages, and `site` runs it at every interpreter start of that distribution, on the host.
//
// Reproduction: a session on W (a thread a block leaves running polls W/tmp); a separate process with
// TMPDIR=W/tmp runs the wheel step for a one-file wheel from a local directory into a stand-in
// site-packages. Expected: the staging process refuses a TMPDIR in a live root (as confine.tmpdir-in-root),
// or nothing it did not install lands in site-packages.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-tmp-'))
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

test('a session cannot plant a sitecustomize.py in the wheels `vis runtime stage` moves into a distribution', async () => {
  const W = join(base, 'work')
  const T = join(W, 'tmp')
  const wheels = join(base, 'wheels')
  const site = join(base, 'site-packages')
  const home = join(base, 'home')
  for (const d of [W, T, wheels, site, home]) mkdirSync(d, { recursive: true })
  makeWheel(wheels)
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [W] })
  cleanups.push(() => s.dispose())
  const armed = await s.runBlock(
    [
      'import os, threading, time',
      `T = ${JSON.stringify(T)}`,
      'code = \'open(__import__("os").path.expanduser("~") + "/never", "a").close()\\n\'',
      'def watch():',
      '    end = time.time() + 90',
      '    while time.time() < end:',
      '        try:',
      '            for d in os.listdir(T):',
      "                if d.startswith('vis-wheels-') and not os.path.exists(f'{T}/{d}/sitecustomize.py'):",
      "                    open(f'{T}/{d}/sitecustomize.py', 'w').write('# planted by a sandbox: runs at every start\\n' + code)",
      '        except OSError:',
      '            pass',
      '        time.sleep(0.005)',
      'threading.Thread(target=watch, daemon=True).start()',
      "print('watching')",
    ].join('\n'),
    { timeoutMs: 30_000 },
  )
  assert.match(armed.stdout ?? '', /watching/, JSON.stringify(armed))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, wheels, site], {
    env: { ...process.env, TMPDIR: T, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { landed: string[]; error?: string }
  assert.ok(
    !out.landed.includes('sitecustomize.py'),
    `the staging process (TMPDIR inside a live session's root) moved the sandbox's sitecustomize.py into ` +
      `site-packages, where site runs it at every start of the distribution: ${JSON.stringify(out)}`,
  )
})
