import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import type { OnProgress } from './progress.js'
import { run } from './tools.js'

// pytest and what it imports, from Debian's pure-Python packages (no PyPI on
// these machines). exceptiongroup and tomli are only needed before 3.11.
export const PYTEST_DEBS = [
  'python3-pytest',
  'python3-pluggy',
  'python3-iniconfig',
  'python3-packaging',
  'python3-attr',
] as const

// Downloads the .debs into cacheDir (reused across stagings) and returns
// "name version" for each.
async function fetchDebs(cacheDir: string, onProgress: OnProgress): Promise<Map<string, string>> {
  mkdirSync(cacheDir, { recursive: true })
  const found = new Map<string, string>()
  const scan = () => {
    for (const f of readdirSync(cacheDir)) {
      const m = /^([a-z0-9.+-]+)_([^_]+)_all\.deb$/.exec(f)
      if (m && (PYTEST_DEBS as readonly string[]).includes(m[1]!)) found.set(m[1]!, f)
    }
  }
  scan()
  const missing = PYTEST_DEBS.filter((d) => !found.has(d))
  if (missing.length > 0) {
    onProgress({ step: 'pytest', detail: `apt-get download ${missing.join(' ')}` })
    try {
      await run('apt-get', ['download', ...missing], { cwd: cacheDir, timeoutMs: 300_000 })
    } catch (err) {
      throw new VisError(
        'dist.pytest',
        `could not download ${missing.join(', ')} with apt-get (run "apt-get update" first?): ${(err as Error).message}`,
        { path: cacheDir },
      )
    }
    scan()
  }
  const still = PYTEST_DEBS.filter((d) => !found.has(d))
  if (still.length > 0) {
    throw new VisError('dist.pytest', `apt-get download did not produce ${still.join(', ')}`, {
      path: cacheDir,
    })
  }
  return found
}

// Installs pytest's modules into sitePackages. Returns "name version" labels
// for the manifest.
export async function installPytest(
  sitePackages: string,
  cacheDir: string,
  onProgress: OnProgress,
): Promise<string[]> {
  const debs = await fetchDebs(cacheDir, onProgress)
  const work = makeHostStateDir('vis-debs-')
  const labels: string[] = []
  try {
    for (const [name, file] of debs) {
      const into = join(work, name)
      await run('dpkg-deb', ['-x', join(cacheDir, file), into])
      const pkgs = join(into, 'usr', 'lib', 'python3', 'dist-packages')
      if (!existsSync(pkgs)) throw new VisError('dist.pytest', `${file} has no dist-packages`, { path: file })
      cpSync(pkgs, sitePackages, {
        recursive: true,
        dereference: true,
        filter: (src) => !src.endsWith('__pycache__'),
      })
      labels.push(`${name.replace(/^python3-/, '')} ${file.split('_')[1]}`)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  onProgress({ step: 'pytest', detail: `installed ${labels.join(', ')}` })
  return labels
}
