import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { visHome } from '../util/home.js'
import { exposureText, extensionEntryExposure } from '../util/home-files.js'
import { openHome } from '../util/home-guard.js'
import { projectTrust, untrustedReason } from './trust.js'

export type ExtensionScope = 'global' | 'project'

// One extension file as found on disk; `key` is what clashes are decided on.
export type ExtensionSource = {
  key: string
  scope: ExtensionScope
  kind: 'file' | 'package'
  // The file that registers: <dir>/<key>.py or <dir>/<key>/extension.py.
  path: string
  // The package directory (kind 'package') or the extensions directory (kind 'file').
  dir: string
}

export type Discovery = {
  // Extension directories that exist, project first (the order of sys.path in workers); the
  // project's is the trusted copy in the vis home.
  dirs: string[]
  sources: ExtensionSource[]
  // Global extensions hidden by a project one of the same name.
  shadowed: ExtensionSource[]
  // The project's extension folder when it did not load because no person trusted its content as
  // it is now (trust.ts): nothing of it is discovered, not even on sys.path.
  blocked?: { dir: string; reason: string }
  // Entries of the home's extension folder left out because a sandbox can write what they are
  // (a link into a session's root: home-files.ts), each with why; warned as ext.source-writable.
  refused: { key: string; path: string; scope: ExtensionScope; reason: string }[]
}

export function extensionDirs(opts: { home?: string; project?: string }): {
  global: string
  project?: string
} {
  return {
    global: join(visHome(opts.home), 'extensions'),
    project: opts.project ? join(resolve(opts.project), '.vis', 'extensions') : undefined,
  }
}

function isTestFile(name: string): boolean {
  return /^test_.*\.py$/.test(name) || /_test\.py$/.test(name) || name === 'conftest.py'
}

// The home's own extension folder is masked in every jail, but an entry in it may be a link (a
// module developed in a project and linked in): where it leads is not masked, and a block there
// would rewrite what the host imports next, unconfined (seventeenth outsider pass). Each entry, a
// package with everything in it, is judged where it really is; one a sandbox can write is left
// out. The registry judges the file again as it reads it (registry.ts), so no swap after this look
// is imported. Every entry counts, not only extensions: helpers in the folder are on sys.path.
function refusedEntries(home: string, dir: string, scope: ExtensionScope): Discovery['refused'] {
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch {
    return []
  }
  const out: Discovery['refused'] = []
  for (const name of names) {
    const full = join(dir, name)
    const e = extensionEntryExposure(home, full)
    if (e === undefined) continue
    out.push({
      key: name.endsWith('.py') ? basename(name, '.py') : name,
      path: full,
      scope,
      reason: `not loaded: ${exposureText(e)}; code a block writes there would run on this host unconfined. Copy it into ${dir} instead of linking it`,
    })
  }
  return out
}

function scan(dir: string, scope: ExtensionScope): ExtensionSource[] {
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch {
    return []
  }
  const out: ExtensionSource[] = []
  for (const name of names) {
    if (name.startsWith('.') || name.startsWith('_')) continue
    const full = join(dir, name)
    if (name.endsWith('.py')) {
      if (isTestFile(name)) continue
      out.push({ key: basename(name, '.py'), scope, kind: 'file', path: full, dir })
    } else if (existsSync(join(full, 'extension.py')) && statSync(full).isDirectory()) {
      out.push({ key: name, scope, kind: 'package', path: join(full, 'extension.py'), dir: full })
    }
  }
  return out
}

// Every *.py and <dir>/extension.py in ~/.vis/extensions and <project>/.vis/extensions.
// Test files (test_*.py, *_test.py) and private names (_x.py) are not extensions.
// A project's folder counts only when a person trusted its content as it is now (trust.ts), and
// then through the copy of that content trust made: sources and dirs name the copy.
export function discoverExtensions(opts: { home?: string; project?: string }): Discovery {
  // The global folder and the trust records run on this host: never from a home a running sandbox
  // can write (home-guard.ts).
  openHome(opts.home, 'ext.discover')
  const d = extensionDirs(opts)
  const trust = opts.project && d.project ? projectTrust(opts.home, opts.project, d.project) : undefined
  // The copy of what was trusted, in the vis home (trust.ts): never the project folder, which
  // sessions may write after it was hashed.
  const usable = trust?.state === 'trusted' ? trust.copy : undefined
  const project = usable ? scan(usable, 'project') : []
  const home = visHome(opts.home)
  const refused = refusedEntries(home, d.global, 'global')
  const left = new Set(refused.map((r) => r.path))
  const global = scan(d.global, 'global').filter((s) => !left.has(s.kind === 'package' ? s.dir : s.path))
  const taken = new Set(project.map((s) => s.key))
  const dirs = [usable, d.global].filter((x): x is string => x !== undefined && existsSync(x))
  const blocked =
    trust && trust.state !== 'trusted' && trust.state !== 'absent'
      ? { dir: trust.dir, reason: untrustedReason(trust, opts.project!) }
      : undefined
  return {
    dirs,
    sources: [...global.filter((s) => !taken.has(s.key)), ...project],
    shadowed: global.filter((s) => taken.has(s.key)),
    refused,
    ...(blocked ? { blocked } : {}),
  }
}
