import { copyFileSync, cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import { VisError } from '../util/errors.js'
import { archiveFileFor, packTree, writeArchiveManifests } from './archive.js'
import { cleanStaleSiblings, replaceInPlace, siblingTemp } from './atomic.js'
import {
  findLocalPython,
  type LocalPython,
  localPythonCandidates,
  probePython,
  pythonPlaceRefusal,
} from './discover.js'
import { defaultDistDir, stagedTreeRoot, treePaths } from './layout.js'
import { type DistManifest, writeManifest } from './manifest.js'
import { installSelection } from './packages/install.js'
import { requestedNames, type Selection } from './packages/sets.js'
import { isSupportedMinor, platformTag } from './platform.js'
import { noProgress, type OnProgress } from './progress.js'
import { installPytest } from './pytest.js'
import { setRunpath } from './runpath.js'
import { copyExtensionDir, copyStdlib, listFiles } from './slim.js'
import { slimCheck } from './smoke.js'
import { compileStdlib, run } from './tools.js'
import { validateTree } from './validate.js'

export type StageOptions = {
  // cpython-dist/ directory; defaults to the one beside the package.
  out?: string
  force?: boolean
  withPytest?: boolean
  // Packages beyond pytest (`--with data,requests`); from Debian unless indexUrl is set.
  packages?: Selection
  // A package index URL or a directory of wheels (`--index-url`).
  indexUrl?: string
  // Also write the archive and its manifests (default true).
  archive?: boolean
  onProgress?: OnProgress
}

export type StageResult = {
  root: string
  version: string
  minor: string
  platform: string
  archive?: string
  sha256?: string
  // True when an equivalent tree was already in place and nothing was done.
  skipped: boolean
}

// A staged tree equivalent to what was asked for is left alone unless forced.
function alreadyStaged(
  finalRoot: string,
  version: string,
  withPytest: boolean,
  requested: string[],
): boolean {
  try {
    const t = validateTree(finalRoot)
    const hasPytest = t.manifest.packages.some((p) => p.startsWith('pytest '))
    const same = (t.manifest.requested ?? []).filter((r) => r !== 'pytest').join(',') === requested.join(',')
    return t.version === version && hasPytest === withPytest && same
  } catch {
    return false
  }
}

export async function stageMinor(minor: string, opts: StageOptions = {}): Promise<StageResult> {
  if (!isSupportedMinor(minor)) {
    throw new VisError('dist.stage', `Python ${minor} is not supported (3.11, 3.12, 3.13 are)`, { minor })
  }
  const refused: VisError[] = []
  const local = findLocalPython(minor, refused)
  if (!local && refused[0] !== undefined) throw refused[0]
  if (!local) {
    const tried = localPythonCandidates(minor)
    throw new VisError(
      'dist.stage',
      `no local shared-library CPython ${minor} found (${tried.length ? `tried ${tried.join(', ')}` : 'none installed'}); ` +
        'install one (e.g. pyenv with PYTHON_CONFIGURE_OPTS=--enable-shared) or use --from-archive',
      { minor },
    )
  }
  return stageLocal(local, opts)
}

export async function stageFromPython(python: string, opts: StageOptions = {}): Promise<StageResult> {
  const before = pythonPlaceRefusal(python)
  if (before !== undefined) throw before
  const info = probePython(python)
  const after = pythonPlaceRefusal(python, info)
  if (after !== undefined) throw after
  return stageLocal(info, opts)
}

async function stageLocal(py: LocalPython, opts: StageOptions): Promise<StageResult> {
  const onProgress = opts.onProgress ?? noProgress
  const out = resolve(opts.out ?? defaultDistDir())
  const platform = platformTag()
  const { minor, version } = py
  const finalRoot = stagedTreeRoot(out, minor, platform)
  const withPytest = opts.withPytest ?? false
  const requested = opts.packages ? requestedNames({ ...opts.packages, pytest: false }) : []
  if (!opts.force && alreadyStaged(finalRoot, version, withPytest, requested)) {
    onProgress({ step: 'stage', detail: `Python ${version} is already staged at ${finalRoot}` })
    return { root: finalRoot, version, minor, platform, skipped: true }
  }
  cleanStaleSiblings(finalRoot)
  const tmp = siblingTemp(finalRoot)
  try {
    onProgress({ step: 'stage', detail: `staging Python ${version} from ${py.prefix}` })
    const { packages, libraries } = await buildTree(py, tmp, out, opts, onProgress)
    const manifest: DistManifest = {
      version,
      minor,
      platform,
      source: `local:${py.prefix}`,
      packages,
      ...(requested.length || withPytest
        ? { requested: [...(withPytest ? ['pytest'] : []), ...requested] }
        : {}),
      ...(libraries.length ? { libraries } : {}),
      created: new Date().toISOString(),
    }
    writeManifest(tmp, manifest)
    onProgress({ step: 'check', detail: 'running the staged interpreter' })
    await slimCheck(tmp, minor, version)
    validateTree(tmp, { minor })
    const result: StageResult = { root: finalRoot, version, minor, platform, skipped: false }
    if (opts.archive !== false) {
      const archivesDir = join(out, 'archives')
      mkdirSync(archivesDir, { recursive: true })
      const file = archiveFileFor(archivesDir, version, platform)
      onProgress({ step: 'archive', detail: `packing ${relative(process.cwd(), file) || file}` })
      const { sha256, size } = await packTree(tmp, file)
      writeArchiveManifests(archivesDir, {
        version,
        minor,
        platform,
        file: basename(file),
        sha256,
        size,
        packages,
      })
      // The tree records the archive it was packed into (the archive's own copy cannot).
      writeManifest(tmp, { ...manifest, sha256 })
      result.archive = file
      result.sha256 = sha256
    }
    replaceInPlace(tmp, finalRoot)
    onProgress({ step: 'stage', detail: `staged Python ${version} at ${finalRoot}` })
    return result
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true })
    throw err
  }
}

async function buildTree(
  py: LocalPython,
  root: string,
  out: string,
  opts: StageOptions,
  onProgress: OnProgress,
): Promise<{ packages: string[]; libraries: string[] }> {
  const { minor } = py
  const p = treePaths(root, minor)
  mkdirSync(p.bin, { recursive: true })
  mkdirSync(p.lib, { recursive: true })

  onProgress({ step: 'copy', detail: `stdlib from ${py.stdlib}` })
  copyStdlib(py.stdlib, p.stdlib)
  if (py.platstdlib !== py.stdlib && existsSync(py.platstdlib)) copyStdlib(py.platstdlib, p.stdlib)
  // Debian keeps lib-dynload inside the stdlib; other layouts may not.
  if (py.destshared && existsSync(py.destshared) && !isInside(py.destshared, py.stdlib)) {
    copyExtensionDir(py.destshared, p.libDynload)
  }
  if (!existsSync(p.libDynload)) {
    throw new VisError('dist.stage', `no lib-dynload found for ${py.executable}`, { path: py.stdlib })
  }
  mkdirSync(p.sitePackages, { recursive: true })
  writeFileSync(
    join(p.sitePackages, 'README.txt'),
    'Packages here are installed by vis-runtime staging only; no .pth files.\n',
  )

  onProgress({ step: 'copy', detail: `libpython and headers` })
  copyFileSync(py.libpython, p.libpython)
  symlinkSync(`libpython${minor}.so.1.0`, join(p.lib, `libpython${minor}.so`))
  const abi3 = join(py.libdir, 'libpython3.so')
  if (existsSync(abi3)) copyFileSync(abi3, join(p.lib, 'libpython3.so'))
  cpSync(py.include, p.include, { recursive: true, dereference: true })
  // Debian's pyconfig.h is a multiarch wrapper; take the arch-specific one.
  const platConfig = join(py.platinclude, 'pyconfig.h')
  if (py.platinclude !== py.include && existsSync(platConfig))
    copyFileSync(platConfig, join(p.include, 'pyconfig.h'))

  copyFileSync(py.executable, p.executable)
  symlinkSync(`python${minor}`, join(p.bin, 'python3'))
  symlinkSync(`python${minor}`, join(p.bin, 'python'))

  onProgress({ step: 'strip', detail: 'strip --strip-debug on shared objects' })
  const objects = [p.executable, p.libpython, ...listFiles(p.libDynload, (n) => n.endsWith('.so'))]
  await run('strip', ['--strip-debug', ...objects], { code: 'dist.stage' })
  await setRunpath(p.executable, '$ORIGIN/../lib')

  let packages: string[] = []
  if (opts.withPytest) packages = await installPytest(p.sitePackages, join(out, '.debs'), onProgress)
  const extra = opts.packages
    ? await installSelection(opts.packages, p, minor, {
        indexUrl: opts.indexUrl,
        debCache: join(out, '.debs'),
        python: py.executable,
        onProgress,
      })
    : { packages: [], libraries: [] }
  packages = [...new Set([...packages, ...extra.packages])].sort()

  onProgress({ step: 'compile', detail: 'compiling .pyc files (unchecked-hash)' })
  await compileStdlib(p.executable, p.stdlib)
  return { packages, libraries: extra.libraries }
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}
