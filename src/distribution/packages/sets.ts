import { VisError } from '../../util/errors.js'
import { ownValue } from '../../util/own-key.js'

// What `--with` accepts: named sets and single packages, by the names models and users
// write (import name or index name), each mapped to its Debian package and its index
// (wheel) requirement.
export type PackageSpec = {
  // The name the manifest and `vis runtime status` show.
  name: string
  // The module a block imports.
  module: string
  debian: string
  wheel: string
}

const PACKAGES: readonly PackageSpec[] = [
  { name: 'numpy', module: 'numpy', debian: 'python3-numpy', wheel: 'numpy' },
  { name: 'pandas', module: 'pandas', debian: 'python3-pandas', wheel: 'pandas' },
  { name: 'matplotlib', module: 'matplotlib', debian: 'python3-matplotlib', wheel: 'matplotlib' },
  { name: 'pillow', module: 'PIL', debian: 'python3-pil', wheel: 'pillow' },
  { name: 'requests', module: 'requests', debian: 'python3-requests', wheel: 'requests' },
  { name: 'httpx', module: 'httpx', debian: 'python3-httpx', wheel: 'httpx' },
  { name: 'bs4', module: 'bs4', debian: 'python3-bs4', wheel: 'beautifulsoup4' },
  { name: 'lxml', module: 'lxml', debian: 'python3-lxml', wheel: 'lxml' },
  { name: 'yaml', module: 'yaml', debian: 'python3-yaml', wheel: 'pyyaml' },
  // pip for tool processes (`python3 -m pip download` under shell()); in no set, since the
  // distribution the package ships strips ensurepip and a block installs nothing at run time.
  { name: 'pip', module: 'pip', debian: 'python3-pip', wheel: 'pip' },
]

// Other spellings of the same packages.
const ALIASES: Record<string, string> = {
  pil: 'pillow',
  beautifulsoup4: 'bs4',
  pyyaml: 'yaml',
}

// Named sets. `data` is what analysis blocks reach for; `web` what fetching and parsing
// blocks do; `all` both.
export const SETS: Record<string, readonly string[]> = {
  data: ['numpy', 'pandas', 'matplotlib', 'pillow'],
  web: ['requests', 'httpx', 'bs4', 'lxml', 'yaml'],
  all: ['numpy', 'pandas', 'matplotlib', 'pillow', 'requests', 'httpx', 'bs4', 'lxml', 'yaml'],
}

export type Selection = {
  pytest: boolean
  // Known packages, in the order of PACKAGES.
  packages: PackageSpec[]
  // Names given that are not known: installed from a wheel index as given (never from
  // Debian, where a name does not say which package it is).
  extra: string[]
  // The sets named, for the manifest.
  sets: string[]
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

// Parses `--with` values: each may hold several comma-separated names.
export function parseWith(values: readonly string[]): Selection {
  const names = values
    .flatMap((v) => v.split(','))
    .map((n) => n.trim())
    .filter(Boolean)
  const wanted = new Set<string>()
  const extra: string[] = []
  const sets: string[] = []
  let pytest = false
  for (const raw of names) {
    const n = raw.toLowerCase()
    if (n === 'pytest') pytest = true
    // Own keys only: `--with constructor` names no set, not Object.prototype's function.
    else if (ownValue(SETS, n) !== undefined) {
      sets.push(n)
      for (const p of ownValue(SETS, n) ?? []) wanted.add(p)
    } else {
      const known = ownValue(ALIASES, n) ?? n
      if (PACKAGES.some((p) => p.name === known)) wanted.add(known)
      else if (NAME.test(raw)) extra.push(raw)
      else {
        throw new VisError(
          'dist.packages',
          `--with ${raw}: not a package name (known sets: ${Object.keys(SETS).join(', ')}; packages: pytest, ${PACKAGES.map((p) => p.name).join(', ')})`,
          {},
        )
      }
    }
  }
  return {
    pytest,
    packages: PACKAGES.filter((p) => wanted.has(p.name)),
    extra: [...new Set(extra)],
    sets: [...new Set(sets)],
  }
}

export function knownPackages(): readonly PackageSpec[] {
  return PACKAGES
}

// The names a selection stands for, as the manifest's `requested` records them.
export function requestedNames(sel: Selection): string[] {
  return [...(sel.pytest ? ['pytest'] : []), ...sel.packages.map((p) => p.name), ...sel.extra].sort()
}

// Names only an index can install, refused before any staging starts.
export function checkSource(sel: Selection, indexUrl: string | undefined): void {
  if (sel.extra.length > 0 && !indexUrl) {
    throw new VisError(
      'dist.packages',
      `--with ${sel.extra.join(', ')}: unknown to the Debian source (it knows pytest, ${PACKAGES.map((p) => p.name).join(', ')} and the sets ${Object.keys(SETS).join(', ')}); give --index-url (an index or a directory of wheels) to install them as wheels`,
      { extra: sel.extra },
    )
  }
}
