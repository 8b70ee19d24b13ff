// Attack (tenth outsider pass; README, VIS_HOME: "A home inside a root of a session running now that does
// not mask it is refused (`home.inside-live-session-root`)"; SECURITY.md Roots, "A vis home opened inside a
// LIVE session's root": opening a home — the store, mcp.json, extension discovery and trust records,
// `vis ext trust` — is refused while a live jail writes it). A vis home also holds the per-user CPython
// cache, `<home>/python/runtime/<minor>/<platform>/python` (src/distribution/layout.ts cacheRoot), which is
// what an npm-installed vis runs: no tree is staged beside an installed package, so the resolver's order
// (VIS_PYTHON_HOME, staged, checkout, cache) reaches the cache. Resolving a distribution opens no home
// through the guard: `vis python`, `vis runtime`, and every host-side interpreter a library runtime starts
// take whatever tree is there. A block of a live session on R fills R/h with such a tree (links to the
// read-only distribution its jail shows, and one real site-packages folder holding a `.pth` of its own);
// the person, with that session still running, runs `VIS_HOME=R/h vis python -c 'print(1)'`: the
// embedded interpreter runs on the host, unconfined, and `site` executes the planted `.pth`.
//
// Reproduction: a session on R (its worker live) runs test/attacks/fixtures/plant-python-cache.py with
// HOME_DIR=R/h; then `VIS_HOME=R/h VIS_PYTHON_STAGED_DIR=<empty> vis python -c 'print(1)'` (the empty
// staged directory stands for an npm install, which ships no CPython). A marker outside every root is
// written by the host. A fix: resolve the per-user cache only from a home opened through the live-jail
// guard (openHome), or refuse a cache inside any session's root, as the other distribution places are.
//
// Seen failing on main before fx9a (2166e6d) and on main with fx9a merged (3f97843), where fx9a's own
// test/attacks/vis-home-made-inside-running-jail.test.ts passes: the live-jail guard (openHome) does not
// reach the distribution resolver.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { platformTag } from '../../src/distribution/platform.js'
import { createRuntime } from '../../src/sessions/create-runtime.js'
import { python } from '../sessions/helpers.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-late-pycache-'))
after(() => rmSync(base, { recursive: true, force: true }))

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')
const planter = readFileSync(resolve(import.meta.dirname, 'fixtures/plant-python-cache.py'), 'utf8')

test('a live session cannot plant the CPython a vis home inside its root makes the host run', async () => {
  const R = join(base, 'R')
  const outside = join(base, 'outside')
  const noStaged = join(base, 'no-staged')
  mkdirSync(R)
  mkdirSync(outside)
  mkdirSync(noStaged)
  const lateHome = join(R, 'h')
  const marker = join(outside, 'ran-on-the-host')
  const rt = await createRuntime({ home: join(base, 'home'), python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [R] })
    try {
      const r = await s.runBlock(
        [
          `HOME_DIR = ${JSON.stringify(lateHome)}`,
          `MARKER = ${JSON.stringify(marker)}`,
          `PLATFORM = ${JSON.stringify(platformTag())}`,
          planter,
        ].join('\n'),
      )
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      assert.match(r.stdout ?? '', /planted/)
      assert.ok(!existsSync(marker), 'the marker was written from inside the jail')

      // The session is live (its worker keeps its jail). The person runs vis with its home there.
      const run = spawnSync(process.execPath, [visBin, 'python', '-c', 'print(1)'], {
        cwd: outside,
        env: { ...process.env, VIS_HOME: lateHome, VIS_PYTHON_STAGED_DIR: noStaged },
        encoding: 'utf8',
        timeout: 120_000,
      })
      assert.ok(
        !existsSync(marker),
        `a session on R planted a CPython tree in ${lateHome}/python/runtime while it ran, and ` +
          `\`VIS_HOME=${lateHome} vis python\` ran its .pth on the host, outside every jail: ` +
          `${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (exit ${run.status}: ${run.stdout.trim()} ${run.stderr.trim().slice(0, 400)})`,
      )
      // Refused for that reason, naming it (not a crash, not a download into that home).
      assert.notEqual(run.status, 0)
      assert.match(
        run.stderr,
        /home\.inside-live-session-root|a root of a session that vis process/,
        run.stderr,
      )
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
})
