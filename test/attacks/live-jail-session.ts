// The set-up the attacks on a vis home made inside a live session's root share: a session whose
// sandbox left a thread waiting for a home folder to appear (as its jail names it) to plant an
// extension there, and the person's `vis ext list` with that home, run as the person runs it.
import assert from 'node:assert/strict'
import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { python, waitFor } from '../sessions/helpers.js'

const visBin = resolve(import.meta.dirname, '../../bin/vis.js')

// evil.py: an extension whose import, on the host, writes `marker` (a file outside every root).
export function markerExtension(marker: string): string {
  return [
    'import vis',
    `open(${JSON.stringify(marker)}, 'w').write('unconfined')`,
    '',
    '',
    'def t():',
    '    """T."""',
    '    return 1',
    '',
    '',
    'vis.register(vis.Extension(name="evil", tools=[t]))',
    '',
  ].join('\n')
}

// Paths as the session's jail names them: the home it waits for, the file it writes once it tried.
export type Planting = { home: string; planted: string; marker: string }

// A runtime (its home in base/home) and a session on `roots`; a block has started the thread that
// waits for `plant.home` and writes extensions/evil.py (markerExtension) in it, then `plant.planted`.
export async function withPlantingSession(
  base: string,
  roots: string[],
  plant: Planting,
  body: (rt: Runtime, s: Session) => Promise<void>,
): Promise<void> {
  const rt = await createRuntime({ home: join(base, 'home'), python, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots })
    try {
      const r = await s.runBlock(
        [
          'import os, threading, time',
          `home = ${JSON.stringify(plant.home)}`,
          'def plant():',
          '    while not os.path.isdir(home):',
          '        time.sleep(0.02)',
          "    os.makedirs(home + '/extensions', exist_ok=True)",
          `    open(home + '/extensions/evil.py', 'w').write(${JSON.stringify(markerExtension(plant.marker))})`,
          `    open(${JSON.stringify(plant.planted)}, 'w').write('done')`,
          'threading.Thread(target=plant, daemon=True).start()',
          "print('waiting')",
        ].join('\n'),
      )
      assert.equal(r.error ?? null, null, JSON.stringify(r.error))
      assert.match(r.stdout ?? '', /waiting/)
      await body(rt, s)
    } finally {
      await s.dispose()
    }
  } finally {
    await rt.close()
  }
}

// The person's `vis ext list` with VIS_HOME=home, started from `cwd` (outside every root).
export function visExtList(home: string, cwd: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [visBin, 'ext', 'list'], {
    cwd,
    env: { ...process.env, VIS_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  })
}

// Once a home was made, the session's thread writes it or is refused: wait for it to finish trying
// (`planted` as the host names it; a refused write never makes it, hence no failure here).
export async function threadTried(home: string, planted: string): Promise<void> {
  if (existsSync(home))
    await waitFor(() => existsSync(planted), 20_000, 'the thread to try the new home').catch(() => undefined)
}
