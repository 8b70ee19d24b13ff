// Attack (fourteenth outsider pass; surface 4: `vis runtime stage --with NAMES --index-url DIR`,
// src/distribution/packages/wheels.ts installWheels and src/distribution/smoke.ts slimCheck). The wheel step
// promises "it never builds anything (--only-binary) and never runs the package's code", and it keeps `bin/`
// and `*.pth` (code run at every start) out of the tree. But a wheel may hold a top-level
// `sitecustomize.py` (or `usercustomize.py`): site.py imports it at every start of the interpreter, `-I`
// included (isolated mode skips the user site and the cwd, not site-packages' sitecustomize). The copy of
// the stdlib drops exactly these files (slim.ts DROP_FILES), the wheel step does not; and before the tree
// is archived the stage runs the tree's own interpreter on the host (slimCheck: `python -I -c PROBE`), so
// the wheel's code runs there, unconfined. The directory of wheels is not judged either: a project's
// `wheels/` folder in a session's root is written by its block (`dist.source-in-root` refuses only a
// `--from-archive` file there).
//
// Reproduction: a session on W; its block writes W/wheels/tinypkg-1.0-py3-none-any.whl holding
// tinypkg/__init__.py and sitecustomize.py (appending to a marker outside W). Then, as the person, `vis
// runtime stage --python 3.11 --with tinypkg --index-url W/wheels --out <out>` from outside W. Expected: the
// stage is refused (a wheel directory in a root) or ships no sitecustomize; the marker is never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-sitecustomize-'))
const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
  rmSync(base, { recursive: true, force: true })
})
const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

test("a wheel's sitecustomize.py never runs on the host during `vis runtime stage --with`", async () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const out = join(base, 'out')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [W] })
  cleanups.push(() => s.dispose())
  const hook = `import sys\nopen(${JSON.stringify(marker)}, 'a').write('sitecustomize.py from the block\\'s wheel, run on the host by ' + sys.executable + ' ' + ' '.join(sys.argv) + '\\n')\n`
  const planted = await s.runBlock(
    [
      'import os, zipfile',
      `W = ${JSON.stringify(W)}`,
      "os.makedirs(W + '/wheels', exist_ok=True)",
      "z = zipfile.ZipFile(W + '/wheels/tinypkg-1.0-py3-none-any.whl', 'w')",
      "z.writestr('tinypkg/__init__.py', 'X = 1\\n')",
      `z.writestr('sitecustomize.py', ${JSON.stringify(hook)})`,
      "z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')",
      "z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
      "z.writestr('tinypkg-1.0.dist-info/RECORD', '')",
      'z.close()',
      "print('planted')",
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
  const r = spawnSync(
    process.execPath,
    [
      visBin,
      'runtime',
      'stage',
      '--python',
      '3.11',
      '--with',
      'tinypkg',
      '--index-url',
      `${W}/wheels`,
      '--out',
      out,
    ],
    { cwd: outside, env: { ...process.env, VIS_HOME: home }, encoding: 'utf8', timeout: 400_000 },
  )
  const said = `${r.stdout}\n${r.stderr}`.trim().replace(/\n/g, ' | ')
  assert.ok(
    !existsSync(marker),
    `vis runtime stage installed the block's wheel from W/wheels with its sitecustomize.py and ran the ` +
      `staged interpreter on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} ` +
      `(stage exited ${r.status}: ${said.slice(-400)})`,
  )
})
