// What a person does about each problem `vis doctor` finds: the Debian/Ubuntu command that
// fixes it and what fails until then. Printed at the end of `vis doctor` and of postinstall,
// so a newcomer learns that bubblewrap is missing before the first session, not from it.

import { SUPPORTED_MINORS } from '../distribution/platform.js'
import { distBaseUrl, selectMinor } from '../distribution/resolve.js'
import type { Check } from './probe.js'

export type Advice = { id: string; level: Check['level']; problem: string; fix: string; until: string }

// With the opt-out set, sessions do start, without the layer: saying they refuse would be false.
function sessionsRefuse(): string {
  return process.env.VIS_ALLOW_UNCONFINED === '1'
    ? 'sessions start WITHOUT this layer (VIS_ALLOW_UNCONFINED=1): what it confines is not confined'
    : 'every session refuses to start (confine.unavailable), unless VIS_ALLOW_UNCONFINED=1 runs it without this layer'
}

// Debian packages that fix a check, for the one-line install command.
const PACKAGES: Record<string, string> = { bubblewrap: 'bubblewrap', nsenter: 'util-linux' }

function adviceFor(c: Check): Omit<Advice, 'id' | 'level' | 'problem'> | undefined {
  if (c.id === 'bubblewrap') return { fix: 'sudo apt-get install -y bubblewrap', until: sessionsRefuse() }
  if (c.id.startsWith('ns.'))
    return {
      fix:
        'allow unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1` (Debian) or ' +
        '`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10+); in a container, start it with user namespaces allowed',
      until: sessionsRefuse(),
    }
  if (c.id === 'nsenter')
    return {
      fix: 'sudo apt-get install -y util-linux',
      until: 'the shell and git tools cannot start their jails',
    }
  if (c.id === 'launcher' || c.id === 'addon')
    return {
      fix: 'reinstall vis-runtime (its prebuilds carry it) or build it: `npm run build:addon` in a checkout',
      until: sessionsRefuse(),
    }
  if (c.id === 'landlock' && c.level === 'error')
    return { fix: 'a Linux kernel 5.13+ with Landlock enabled (lsm=...,landlock)', until: sessionsRefuse() }
  if (c.id === 'seccomp' && c.level === 'error')
    return { fix: 'a Linux kernel with seccomp filters (CONFIG_SECCOMP_FILTER)', until: sessionsRefuse() }
  if (c.id === 'distribution' && c.level === 'warn') return distributionAdvice()
  if (c.id === 'home')
    return {
      fix: 'set VIS_HOME to a writable directory (it holds the database, logs and the CPython cache)',
      until: 'every command that stores anything (sessions, serve, the first CPython download) fails',
    }
  if (c.id === 'sqlite')
    return {
      fix: '`npm rebuild better-sqlite3` in your project (it downloads its prebuilt binary, or compiles it)',
      until: 'sessions cannot be stored: `vis serve`, `vis run` and the library with a store fail',
    }
  if (c.id.startsWith('addon.'))
    return {
      fix: 'reinstall vis-runtime (its prebuilds carry one addon per minor) or, in a checkout, `npm run build:addon`',
      until: `sessions on Python ${c.id.slice('addon.'.length)} fail to start (native.addon-missing)`,
    }
  if (c.id === 'download')
    return {
      fix:
        'fetch it where the network answers (`npx vis runtime fetch`), or point VIS_PYTHON_DIST_URL at ' +
        'file://DIR/cpython of a `vis bundle` DIR',
      until: 'the first session fails when it cannot download CPython',
    }
  if (c.id === 'opt-out')
    return {
      fix: 'unset VIS_ALLOW_UNCONFINED once every layer above is available',
      until: 'a session missing a layer starts without it (with a warning) instead of refusing',
    }
  return undefined
}

// Names the minor sessions use and the URL the download would come from, so the advice is
// true for this machine (an unset VIS_PYTHON_DIST_URL means the default release location).
function distributionAdvice(): Omit<Advice, 'id' | 'level' | 'problem'> {
  let minor: string
  try {
    minor = selectMinor()
  } catch {
    return {
      fix: `set VIS_PYTHON_VERSION to one of ${SUPPORTED_MINORS.join(', ')}`,
      until: 'every session fails',
    }
  }
  return {
    fix:
      `nothing when online, or fetch it ahead: \`npx vis runtime fetch --python ${minor}\`; offline, ` +
      'VIS_PYTHON_DIST_URL=file://DIR/cpython from a `vis bundle` DIR, or VIS_PYTHON_HOME=<a distribution root>',
    until: `the first session downloads CPython ${minor} from ${distBaseUrl()} (about 12 MB), and fails if it cannot`,
  }
}

// Every warning or error with advice attached; checks with no remedy (cgroups a container
// does not delegate, say) keep their own message as the problem and "nothing to install".
export function adviseChecks(checks: Check[]): Advice[] {
  return checks
    .filter((c) => c.level !== 'info')
    .map((c) => {
      const a = adviceFor(c)
      return {
        id: c.id,
        level: c.level,
        problem: c.message,
        fix: a?.fix ?? 'nothing to install; see `vis doctor`',
        until: a?.until ?? 'works, with this layer not enforced',
      }
    })
}

// The one command that installs every missing Debian package, if any are missing.
export function aptCommand(checks: Check[]): string | undefined {
  const pkgs = [
    ...new Set(checks.filter((c) => c.level === 'error' && PACKAGES[c.id]).map((c) => PACKAGES[c.id]!)),
  ]
  return pkgs.length ? `sudo apt-get install -y ${pkgs.join(' ')}` : undefined
}

// The summary lines: what is missing, how to install it, what fails until then.
export function summaryLines(checks: Check[]): string[] {
  const advice = adviseChecks(checks)
  const errors = advice.filter((a) => a.level === 'error')
  const lines: string[] = []
  if (errors.length === 0) lines.push('every confinement layer a session needs is available')
  for (const a of advice) {
    lines.push(`${a.level === 'error' ? 'MISSING' : 'note   '} ${a.id}: ${a.problem}`)
    lines.push(`        fix: ${a.fix}`)
    lines.push(`        until then: ${a.until}`)
  }
  const apt = aptCommand(checks)
  if (apt) lines.push(`Debian/Ubuntu, all at once: ${apt}`)
  return lines
}
