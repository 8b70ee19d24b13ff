import { existsSync, writeFileSync } from 'node:fs'
import { VisError } from './errors.js'
import { visHome } from './home.js'
import { registerHome } from './home-registry.js'
import { type LiveJail, liveJails } from './live-jails.js'
import { within } from './path-within.js'
import { realish } from './real-path.js'
import { identityChain } from './writable-roots.js'

// A vis home holds what the host runs unconfined: its extensions/, mcp.json and trust/. A jail masks
// the homes registered when it started (confinement/protected-homes.ts), so a home made inside a
// root of a jail already running would be an ordinary folder to that sandbox. Opening a home
// therefore registers it (every jail started from now on masks it), then refuses it while a live
// jail, of any vis process, has a root around it that does not mask it (live-jails.ts). A jail
// records itself before it reads the homes registry: of a home opening and a jail starting at the
// same moment, one always sees the other.
//
// What this cannot tell: a folder a sandbox filled before anyone used it as a vis home, with no
// session live at its first open. That folder is the person's choice of VIS_HOME.

// A jail still reading its masks settles within milliseconds; one that does not (stuck, or its
// entry unwritable) counts as masking nothing.
const SETTLE_MS = 2000

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

// The live jails with a root around the home, or inside it (a session's root that became part of a
// home opened later: extensions/<name>/ is a package extension).
function jailsOverlapping(real: string, chain: Set<string>): LiveJail[] {
  const around = (j: LiveJail) =>
    j.roots.some((r) => within(real, r) || within(r, real)) || j.rootIds.some((id) => chain.has(id))
  let jails = liveJails().filter(around)
  const end = Date.now() + SETTLE_MS
  while (jails.some((j) => j.masked === null) && Date.now() < end) {
    sleepSync(5)
    jails = liveJails().filter(around)
  }
  return jails
}

// The home (resolved as visHome resolves it), once no live jail writes it. Call it before reading
// anything the host runs from a home, and again after making the home's folder (a jail that started
// in between may have found the home registered but not there yet, and masked nothing).
export function openHome(home?: string, op = 'home.open'): string {
  const resolved = visHome(home)
  registerHome(resolved)
  const real = realish(resolved)
  const chain = identityChain(real)
  for (const jail of jailsOverlapping(real, chain)) {
    const inside = jail.roots.find((r) => within(r, real))
    // A root the home lies in, by path or by what the directory is (renamed since its jail began).
    const byId = jail.rootIds.findIndex((id) => chain.has(id))
    const root = inside ?? jail.roots.find((r) => within(real, r)) ?? jail.roots[byId]
    const masked = jail.masked?.some((m) => within(real, m)) || jail.maskedIds.some((id) => chain.has(id))
    if (root === undefined || (inside === undefined && masked)) continue
    const who = jail.worker === undefined ? '' : ` (its sandbox runs as pid ${jail.worker})`
    const where = inside === undefined ? `lies inside ${root}` : `holds ${root}`
    throw new VisError(
      'home.inside-live-session-root',
      `The vis home ${resolved} ${where}, a root of a session that vis process ${jail.pid} runs now${who}, ` +
        'and that session can write it: extensions, mcp.json or trust records it put there would run on this host ' +
        'outside every sandbox. Stop that session (or its vis process), or choose a VIS_HOME outside its roots, ' +
        'in a folder you made yourself.',
      { op, path: resolved, root, pid: jail.pid },
    )
  }
  return resolved
}

// Test-only (VIS_TEST_PAUSE_HOME_OPEN=<file>, set by test/confinement/live-jails.test.ts): between a
// home's first look and the making of its folder, says so in <file>.reached and waits for <file>, so
// the test starts a jail exactly there (the case the second look is for). Unset, it does nothing.
export function pauseBeforeMakingHome(): void {
  const gate = process.env.VIS_TEST_PAUSE_HOME_OPEN
  if (!gate) return
  writeFileSync(`${gate}.reached`, '')
  const end = Date.now() + 120_000
  while (!existsSync(gate) && Date.now() < end) sleepSync(10)
}
