// Attack (thirteenth outsider pass; surface: the twelfth pass's rule on mcp.json `env`,
// src/mcp-client/server-env.ts pathsIn). A value is split at whitespace, quotes, `:`, `=`, `,` and `;` and
// each part judged as a path of its own. But a path may hold those characters, and a program that takes the
// whole value as one path (PYTHONPATH splits at `:` only) reads it whole: a root named with a space
// ("~/My Projects/app", "my work") makes PYTHONPATH="<root>/src" two parts, "<...>/my" and "work/src" (taken
// from the server's cwd, inside the vis home, exempt), neither inside the root. The check passes and the host's
// python3 imports the block's module from <root>/src. The same value for a root without a space is refused.
//
// Reproduction: a session on W ("work") and S ("my work"); servers `control` (python3 -m notes_server,
// PYTHONPATH=W/src) and `spaced` (PYTHONPATH=S/src). The block writes notes_server.py into both and connects
// both. Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-spaced-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-spaced-root-host.ts')

test('PYTHONPATH into a root whose name holds a space is refused like any root path', () => {
  const W = join(base, 'work')
  const S = join(base, 'my work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, S, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const r = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fixture, W, S, home, marker],
    {
      cwd: outside,
      env: { ...process.env, VIS_HOME: home },
      encoding: 'utf8',
      timeout: 240_000,
    },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /control: mcp\.launch-denied/, `PYTHONPATH=W/src is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `env PYTHONPATH="<root with a space>/src" passed the launch check (split at the space into two paths outside ` +
      `the root) and the host's python3 imported the block's module: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 400)})`,
  )
})
