import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../../util/errors.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'
import type { TreePaths } from '../layout.js'
import type { OnProgress } from '../progress.js'
import { cleanPythonEnv, run } from '../tools.js'
import { copyFromSysroot } from './copy.js'
import { debianPythonMinor, debLabel, downloadDebs, extractAll, resolveClosure } from './debian.js'
import { placeSharedLibs } from './libs.js'
import { checkSource, type Selection } from './sets.js'
import { installWheels } from './wheels.js'

export type PackageInstall = {
  // "name version" of every Python package installed (the manifest's `packages`).
  packages: string[]
  // Shared libraries copied into lib/deps (the manifest's `libraries`).
  libraries: string[]
}

// Test suites inside packages are never imported at run time; pandas' alone is tens of MB.
const SKIP_DIRS = new Set(['tests', '__pycache__'])

// Installs a selection into the tree: from Debian's python3-* packages when no index is
// given, else as wheels from the index (for any minor).
export async function installSelection(
  sel: Selection,
  p: TreePaths,
  minor: string,
  opts: { indexUrl?: string; debCache: string; python?: string; onProgress: OnProgress },
): Promise<PackageInstall> {
  const none: PackageInstall = { packages: [], libraries: [] }
  if (sel.packages.length === 0 && sel.extra.length === 0) return none
  if (opts.indexUrl) {
    const reqs = [...sel.packages.map((s) => s.wheel), ...sel.extra]
    const packages = await installWheels(reqs, minor, p.sitePackages, { indexUrl: opts.indexUrl }, opts)
    configureMatplotlib(p.sitePackages)
    return { packages, libraries: [] }
  }
  checkSource(sel, opts.indexUrl)
  return installDebian(
    sel.packages.map((s) => s.debian),
    p,
    minor,
    opts,
  )
}

async function installDebian(
  roots: string[],
  p: TreePaths,
  minor: string,
  opts: { debCache: string; onProgress: OnProgress },
): Promise<PackageInstall> {
  opts.onProgress({ step: 'packages', detail: `resolving ${roots.join(', ')} with apt-cache` })
  const closure = await resolveClosure(roots)
  const debMinor = await debianPythonMinor()
  const compiled = closure.filter((i) => i.name.startsWith('python3-') && i.architecture !== 'all')
  if (compiled.length > 0 && debMinor !== minor) {
    throw new VisError(
      'dist.packages',
      `${compiled.map((i) => i.name).join(', ')} ${compiled.length > 1 ? 'hold' : 'holds'} C extensions built for CPython ${debMinor ?? '(unknown)'}, not ${minor}; ` +
        'install them as wheels with --index-url (a reachable package index or a directory of wheels)',
      { minor },
    )
  }
  const files = await downloadDebs(closure, opts.debCache, opts.onProgress)
  const sysroot = makeHostStateDir('vis-sysroot-')
  try {
    opts.onProgress({ step: 'packages', detail: `unpacking ${files.size} packages` })
    await extractAll(files.values(), sysroot)
    const dist = join(sysroot, 'usr', 'lib', 'python3', 'dist-packages')
    if (!existsSync(dist)) throw new VisError('dist.packages', 'the packages hold no dist-packages', {})
    // Debian's dist-packages/ becomes our site-packages/.
    const report = copyFromSysroot(dist, p.sitePackages, sysroot, {
      skipDir: (n) => SKIP_DIRS.has(n),
      hostLinks: ['/etc/ssl/certs'],
    })
    // .pth files run code at every interpreter start (runtime-notes section 2); matplotlib's
    // only declares mpl_toolkits a namespace package, which Python 3 does without it.
    for (const n of readdirSync(p.sitePackages)) if (n.endsWith('.pth')) rmSync(join(p.sitePackages, n))
    if (report.dangling.length > 0) {
      opts.onProgress({ step: 'packages', detail: `left out dangling links: ${report.dangling.join(', ')}` })
    }
    placeData(sysroot, p)
    opts.onProgress({ step: 'packages', detail: 'placing shared libraries (RUNPATH $ORIGIN/...)' })
    const libs = await placeSharedLibs(p.sitePackages, p.lib, sysroot)
    configureMatplotlib(p.sitePackages)
    await prebuildFontCache(p)
    const packages = closure.filter((i) => i.name.startsWith('python3-')).map(debLabel)
    opts.onProgress({
      step: 'packages',
      detail: `installed ${packages.length} Python packages and ${libs.copied.length} shared libraries`,
    })
    return { packages, libraries: libs.copied }
  } finally {
    rmSync(sysroot, { recursive: true, force: true })
  }
}

// Data Debian keeps outside dist-packages, moved into the tree: matplotlib's mpl-data (it
// looks beside its package first) and the time zone database (pytz reads it at import;
// the guest points PYTZ_TZDATADIR at share/zoneinfo).
function placeData(sysroot: string, p: TreePaths): void {
  const mpl = join(sysroot, 'usr', 'share', 'matplotlib', 'mpl-data')
  if (existsSync(join(p.sitePackages, 'matplotlib')) && existsSync(mpl)) {
    copyFromSysroot(mpl, join(p.sitePackages, 'matplotlib', 'mpl-data'), sysroot)
  }
  const zoneinfo = join(sysroot, 'usr', 'share', 'zoneinfo')
  if (existsSync(zoneinfo)) copyFromSysroot(zoneinfo, join(p.root, 'share', 'zoneinfo'), sysroot)
  const pytz = join(p.sitePackages, 'pytz', '__init__.py')
  const mplInit = join(p.sitePackages, 'matplotlib', '__init__.py')
  if (existsSync(mplInit)) {
    // Debian's matplotlib looks for matplotlibrc in /etc only; upstream's last resort is the
    // one in its own mpl-data (outside the guest too: `vis python`, tool jails).
    const text = readFileSync(mplInit, 'utf8')
    const etc = "        yield '/etc/matplotlibrc'\n"
    if (text.includes(etc) && !text.includes("get_data_path(), 'matplotlibrc'")) {
      writeFileSync(
        mplInit,
        text.replace(etc, `${etc}        yield os.path.join(get_data_path(), 'matplotlibrc')\n`),
      )
    }
  }
  if (existsSync(pytz)) {
    // Debian's pytz reads two files of /usr/share/zoneinfo at import, ignoring the
    // PYTZ_TZDATADIR its own open_resource honours; make those two honour it too.
    const text = readFileSync(pytz, 'utf8').replace(
      /pathlib\.Path\("\/usr\/share\/zoneinfo\/([^"]+)"\)/g,
      'pathlib.Path(os.environ.get("PYTZ_TZDATADIR", "/usr/share/zoneinfo"), "$1")',
    )
    writeFileSync(pytz, text)
  }
}

// The prefix the guest substitutes in the prebuilt font list (the tree is staged under a
// temporary name and may be moved).
export const FONT_CACHE_PREFIX = '@VIS_PREFIX@'

// matplotlib builds a font list on its first import (most of a second); build it once here
// and ship it in share/matplotlib/, with the tree's path left as a placeholder the guest
// fills in when it copies the list into the worker's matplotlib cache.
async function prebuildFontCache(p: TreePaths): Promise<void> {
  if (!existsSync(join(p.sitePackages, 'matplotlib'))) return
  const cache = makeHostStateDir('vis-mplcache-')
  try {
    await run(p.executable, ['-I', '-m', 'matplotlib.font_manager'], {
      env: { ...cleanPythonEnv(), MPLCONFIGDIR: cache, MPLBACKEND: 'Agg' },
      code: 'dist.packages',
    })
    const list = readdirSync(cache).find((n) => /^fontlist-v\d+\.json$/.test(n))
    if (!list) return
    const text = readFileSync(join(cache, list), 'utf8').split(p.root).join(FONT_CACHE_PREFIX)
    mkdirSync(join(p.root, 'share', 'matplotlib'), { recursive: true })
    writeFileSync(join(p.root, 'share', 'matplotlib', list), text)
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
}

// matplotlib draws with Agg in the sandbox: no display, no GUI toolkit. Its default
// matplotlibrc (read-only in the distribution) says so, whatever MPLBACKEND the host has.
export function configureMatplotlib(sitePackages: string): void {
  const rc = join(sitePackages, 'matplotlib', 'mpl-data', 'matplotlibrc')
  if (!existsSync(rc)) return
  const text = readFileSync(rc, 'utf8')
  const lines = text.split('\n').filter((l) => !/^\s*#?\s*backend\s*:/.test(l))
  writeFileSync(rc, `## vis-runtime: the sandbox has no display\nbackend: Agg\n${lines.join('\n')}`)
}
