// `vis doctor`'s checks of what every session needs besides confinement: a writable home, the
// SQLite driver, a runtime addon that loads for each staged Python, and the CPython the default
// minor would use (or, when there is none yet, whether its download answers and how big it is).
import type { Check, ProbeReport } from '../../confinement/probe.js'
import { treePaths } from '../../distribution/layout.js'
import { probeDownload } from '../../distribution/probe-download.js'
import { distBaseUrl, explainLocally } from '../../distribution/resolve.js'
import { checkRuntimeAddon } from '../../native/addon-check.js'
import { checkSqliteDriver } from '../../persistence/driver-check.js'
import { visHome } from '../../util/home.js'
import { homeProblem, homeProblemMessage } from '../../util/home-writable.js'

// Errors no opt-out works around: without them no session runs at all.
export const SESSION_NEEDS = new Set(['home', 'sqlite'])

// The probe's bound: a release location that accepts and never answers costs doctor this much.
export const DOWNLOAD_PROBE_MS = 5000

function homeCheck(): Check {
  const problem = homeProblem()
  if (problem) return { id: 'home', level: 'error', message: homeProblemMessage(problem) }
  return { id: 'home', level: 'info', message: `vis home ${visHome()} is writable (VIS_HOME moves it)` }
}

async function sqliteCheck(): Promise<Check> {
  const r = await checkSqliteDriver()
  if (r.ok) return { id: 'sqlite', level: 'info', message: `better-sqlite3 loads (SQLite ${r.sqlite})` }
  return {
    id: 'sqlite',
    level: 'error',
    message: `better-sqlite3 (SQLite's driver) does not load: ${r.message}; sessions cannot be stored`,
  }
}

// One check per minor with a distribution here (staged, cached or named by VIS_PYTHON_HOME).
function addonChecks(probed: ProbeReport): Check[] {
  const roots = new Map<string, string>()
  const selected = explainLocally().resolved
  if (selected) roots.set(selected.minor, selected.libpython)
  for (const d of probed.distributions) {
    const minor = /^(\d+\.\d+)/.exec(d.version)?.[1]
    if (minor && !roots.has(minor)) roots.set(minor, treePaths(d.root, minor).libpython)
  }
  return [...roots].map(([minor, libpython]): Check => {
    const r = checkRuntimeAddon(minor, libpython)
    const id = `addon.${minor}`
    return r.ok
      ? { id, level: 'info', message: `the runtime addon for Python ${minor} loads: ${r.file}` }
      : { id, level: 'warn', message: r.message }
  })
}

async function downloadCheck(): Promise<Check[]> {
  const selected = explainLocally()
  if (selected.resolved || selected.error) return []
  const p = await probeDownload(selected.minor, distBaseUrl(), DOWNLOAD_PROBE_MS)
  if (!p.ok)
    return [
      {
        id: 'download',
        level: 'warn',
        message: `CPython ${selected.minor} would download on first use, but the release location does not answer: ${p.reason}`,
      },
    ]
  const mb = (p.manifest.size / 1048576).toFixed(1)
  return [
    {
      id: 'download',
      level: 'info',
      message: `CPython ${p.manifest.version} would download on first use from ${p.url}: it answers (${p.ms} ms); ${p.manifest.file} is ${mb} MB`,
    },
  ]
}

export async function sessionChecks(probed: ProbeReport): Promise<Check[]> {
  return [homeCheck(), await sqliteCheck(), ...addonChecks(probed), ...(await downloadCheck())]
}
