// Attack (thirteenth outsider pass; surface: what the host RUNS from a place a sandbox writes).
// `vis runtime stage --python 3.12` finds a local CPython by probing candidates (src/distribution/discover.ts
// localPythonCandidates): first every `$PYENV_ROOT/versions/3.12.N/bin/python3.12` (PYENV_ROOT, else
// ~/.pyenv), newest first, then /usr/local/bin and /usr/bin. Each is RUN on the host (`python -I -c PROBE`)
// and the first that answers is copied into the staged distribution, which the host runs from then on. With
// a session on the person's home (the README's "workspace at $HOME", allowed), a block writes
// ~/.pyenv/versions/3.12.99/bin/python3.12 (pyenv installed or not): it sorts first and the host runs it,
// unconfined. No root check is made on the candidates, unlike the programs the host starts by name
// (src/util/host-programs.ts passes over a candidate inside any root).
//
// Reproduction: a runtime with a session on H; the block writes H/.pyenv/versions/3.12.99/bin/python3.12 (a
// shell script appending to a marker outside H); a process with HOME=H and PYENV_ROOT=H/.pyenv (what pyenv's
// installer sets) runs findLocalPython('3.12'), the first step of `vis runtime stage --python 3.12`.
// Expected: the planted interpreter is passed over (it lies in a live session's root); the marker is never
// written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createRuntime } from '../../src/sessions/create-runtime.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-stage-pyenv-'))
const cleanups: (() => Promise<void>)[] = []
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {})
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'find-local-python-host.ts')

test('vis runtime stage does not run a python a block planted under ~/.pyenv in its root', async () => {
  const H = join(base, 'home')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [H, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const rt = await createRuntime({ home, pool: { size: 0 } })
  cleanups.push(() => rt.close())
  const s = await rt.createSession({ roots: [H] })
  cleanups.push(() => s.dispose())
  const script = `#!/bin/sh\necho "H/.pyenv/versions/3.12.99/bin/python3.12, planted by the block, run by the host: $*" >> ${JSON.stringify(marker)}\nexit 1\n`
  const planted = await s.runBlock(
    [
      'import os',
      `d = ${JSON.stringify(join(H, '.pyenv', 'versions', '3.12.99', 'bin'))}`,
      'os.makedirs(d, exist_ok=True)',
      `open(d + '/python3.12', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(d + '/python3.12', 0o755)",
      "print('planted')",
    ].join('\n'),
    { timeoutMs: 60_000 },
  )
  assert.match(planted.stdout ?? '', /planted/, JSON.stringify(planted))
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), fixture], {
    cwd: outside,
    env: { ...process.env, HOME: H, PYENV_ROOT: join(H, '.pyenv'), VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  assert.ok(
    !existsSync(marker),
    `the local-CPython search of vis runtime stage ran the block's H/.pyenv/versions/3.12.99/bin/python3.12 on ` +
      `the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${r.stdout.trim()})`,
  )
})
