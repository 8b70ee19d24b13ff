import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { visHome } from '../util/home.js'
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
  const global = scan(d.global, 'global')
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
    ...(blocked ? { blocked } : {}),
  }
}
