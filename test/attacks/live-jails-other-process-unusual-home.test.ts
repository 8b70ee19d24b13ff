// Attack (fourteenth outsider pass; surface 5: the "other processes' jails" registry, src/util/vis-processes.ts
// liveJailsDirs). Every vis process records its live jails in `$HOME/.vis/live-jails/` and every check for
// "a place a sandbox writes" (the MCP launch, optional modules, staging, bundle) reads that registry. The
// thirteenth pass made a process whose HOME names another place ALSO read the folder under the password
// database's home, so it sees a `vis serve` started with the usual HOME. The other direction is missing:
// a `vis serve` run with its own HOME (a systemd service with `Environment=HOME=/var/lib/vis`, a dev
// container, `HOME=/srv/agent vis serve`) records its jails under THAT home, and the person's own vis
// processes, with the usual HOME, never read it. Its roots are then no one's roots to them: an mcp.json
// env naming a folder in such a root passes the launch check, and the host runs what that sandbox wrote.
//
// Reproduction: process A (HOME=<base>/service-home, its own vis home) holds a live session on R whose
// block wrote R/src/notes_server.py (appending to a marker outside R). Process B (the usual HOME, its own
// vis home, a session on W) has server `viaenv` (python3 -m notes_server, env PYTHONPATH=R/src) and a
// control `own` (the same with PYTHONPATH=W/src, B's own root); B's block connects both. Expected: both
// refused with mcp.launch-denied (R is a live jail's root of a vis process of this user); the marker never
// written. (The same run with A on the usual HOME is refused: that direction is counted.)
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-live-jails-home-'))
const stops: (() => Promise<void>)[] = []
after(async () => {
  for (const s of stops) await s()
  rmSync(base, { recursive: true, force: true })
})
const holder = join(import.meta.dirname, 'fixtures', 'planting-session-holder.ts')

test("the live jails of a vis process with its own HOME count for the person's vis processes", async () => {
  const R = join(base, 'R')
  const W = join(base, 'W')
  const serviceHome = join(base, 'service-home')
  const homeA = join(base, 'vis-home-a')
  const homeB = join(base, 'vis-home-b')
  const outside = join(base, 'outside')
  for (const d of [R, W, serviceHome, homeA, homeB, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const py = `import os, sys\nopen(${JSON.stringify(marker)}, 'a').write("R/src/notes_server.py, written by the sandbox of a vis process with HOME=service-home, imported by another vis process's MCP server\\n")\nsys.exit(0)\n`
  const code = join(base, 'plant.py')
  writeFileSync(
    code,
    [
      'import os',
      `R = ${JSON.stringify(R)}`,
      "os.makedirs(R + '/src', exist_ok=True)",
      `open(R + '/src/notes_server.py', 'w').write(${JSON.stringify(py)})`,
      "print('planted')",
    ].join('\n'),
  )
  const a = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), holder, R, homeA, code], {
    cwd: outside,
    env: { ...process.env, HOME: serviceHome, VIS_HOME: homeA },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((done) => a.on('exit', () => done()))
  stops.push(async () => {
    a.stdin.end()
    await exited
  })
  const first = await new Promise<string>((done) => {
    createInterface({ input: a.stdout }).once('line', done)
    a.on('exit', () => done('(process A exited)'))
  })
  assert.match(first, /planted/, `process A's session planted its module (${first})`)
  assert.ok(existsSync(join(serviceHome, '.vis', 'live-jails')), "A's jail is recorded under its own HOME")

  const server = (PYTHONPATH: string): Server => ({
    command: 'python3',
    args: ['-m', 'notes_server'],
    env: { PYTHONPATH },
    timeout_ms: 15_000,
  })
  const out = runEngine(base, W, homeB, outside, { own: server(`${W}/src`), viaenv: server(`${R}/src`) }, [
    ...connectEach(['own', 'viaenv']),
  ])
  assert.match(out, /own refused mcp\.launch-denied/, `PYTHONPATH in B's own root is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `process B (usual HOME) never read the live jails of process A (HOME=service-home), so env ` +
      `PYTHONPATH=R/src (A's live root) passed its launch check and the host's python imported A's ` +
      `sandbox's module: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
