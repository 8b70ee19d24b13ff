import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { treePaths } from './layout.js'
import { type DistManifest, readDistManifest } from './manifest.js'
import { platformTag } from './platform.js'

export type ValidTree = {
  root: string
  version: string
  minor: string
  platform: string
  libpython: string
  executable: string
  include: string
  manifest: DistManifest
}

// The minors a tree holds a stdlib for (lib/python3.X/os.py).
function stdlibMinors(root: string): string[] {
  const lib = join(root, 'lib')
  if (!existsSync(lib)) return []
  return readdirSync(lib)
    .map((n) => /^python(\d+\.\d+)$/.exec(n)?.[1])
    .filter((m): m is string => m !== undefined && existsSync(join(lib, `python${m}`, 'os.py')))
}

// PY_VERSION from the headers: the tree's own statement of its version,
// readable without running anything.
function headerVersion(root: string, minor: string): string | undefined {
  const h = join(treePaths(root, minor).include, 'patchlevel.h')
  if (!existsSync(h)) return undefined
  return /#define\s+PY_VERSION\s+"(\d+\.\d+\.\d+[a-z0-9]*)"/.exec(readFileSync(h, 'utf8'))?.[1]
}

// Checks what the loader and the interpreter's startup need, so a bad tree
// fails here with a clear message rather than as a 23-line getpath dump.
// A tree without vis-dist.json (a pyenv prefix, an unpacked archive) gets a
// manifest derived from the tree itself.
// platform: the tree's expected platform tag when it is staged for another machine (default: this one's).
export function validateTree(
  root: string,
  opts: { minor?: string; source?: string; platform?: string } = {},
): ValidTree {
  const fail = (why: string): never => {
    throw new VisError('dist.invalid', `${root} is not a usable CPython distribution: ${why}`, { path: root })
  }
  if (!existsSync(root)) fail('it does not exist')
  const manifestPath = join(root, 'vis-dist.json')
  let manifest: DistManifest | undefined
  if (existsSync(manifestPath)) manifest = readDistManifest(manifestPath)

  const minors = stdlibMinors(root)
  let minor = manifest?.minor ?? opts.minor
  if (!minor) {
    if (minors.length !== 1) fail(`expected one lib/python3.X/os.py, found ${minors.length}`)
    minor = minors[0]!
  }
  if (opts.minor && minor !== opts.minor) fail(`it holds Python ${minor}, not ${opts.minor}`)
  const p = treePaths(root, minor)
  if (!existsSync(join(p.stdlib, 'os.py'))) fail(`${p.stdlib}/os.py is missing`)
  if (!existsSync(join(p.stdlib, 'encodings', '__init__.py')))
    fail(`${p.stdlib}/encodings/__init__.py is missing`)
  if (!existsSync(p.libpython)) fail(`${p.libpython} is missing`)
  if (!existsSync(p.executable)) fail(`${p.executable} is missing`)

  const fromHeaders = headerVersion(root, minor)
  const version = manifest?.version ?? fromHeaders
  if (!version) fail(`no vis-dist.json and no ${p.include}/patchlevel.h to read the version from`)
  if (!version!.startsWith(`${minor}.`)) fail(`version ${version} does not match lib/python${minor}`)
  if (fromHeaders && fromHeaders !== version) {
    fail(`vis-dist.json says ${version} but the headers say ${fromHeaders}`)
  }
  const platform = opts.platform ?? platformTag()
  if (manifest && manifest.platform !== platform)
    fail(`built for ${manifest.platform}, ${opts.platform ? 'expected' : 'this machine is'} ${platform}`)

  return {
    root,
    version: version!,
    minor,
    platform,
    libpython: p.libpython,
    executable: p.executable,
    include: p.include,
    manifest: manifest ?? {
      version: version!,
      minor,
      platform,
      source: opts.source ?? `tree:${root}`,
      packages: [],
    },
  }
}
