import { execFileSync } from 'node:child_process'
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { VisError } from '../util/errors.js'
import { packageRoot } from '../util/home.js'
import { archiveFileFor, packTree, writeArchiveManifests } from './archive.js'
import { cleanStaleSiblings, replaceInPlace, siblingTemp } from './atomic.js'
import { findLocalPython } from './discover.js'
import { defaultDistDir, stagedTreeRoot, treePaths } from './layout.js'
import { type DistManifest, writeManifest } from './manifest.js'
import { indexSysroot, neededOf } from './packages/libs.js'
import { hostTarget, type Target } from './platform.js'
import { noProgress, type OnProgress } from './progress.js'
import { copyExtensionDir, copyStdlib, listFiles } from './slim.js'
import type { StageResult } from './stage.js'
import { cleanPythonEnv, compileStdlib, run } from './tools.js'
import { validateTree } from './validate.js'

// Stages a CPython tree for another platform from Debian's own packages for that architecture
// (issue 37: linux-aarch64-gnu built on an x86_64 machine with `dpkg --add-architecture arm64`).
// The .debs are downloaded with apt-get and unpacked with dpkg-deb -x (never installed), then
// laid out like a tree staged from a local CPython: stdlib slimmed the same way, .pyc compiled,
// debug info stripped by the target's binutils. Unlike that tree, this one carries the shared
// libraries its extension modules need (libssl, libffi, libsqlite3, ...) in lib/deps/, found
// through $ORIGIN RUNPATHs, because a consumer's arm64 machine is not assumed to have them.

// The interpreter, its stdlib and its headers (the cross build compiles the addon against them).
const cpythonDebs = (minor: string) => [
  `python${minor}-minimal`,
  `libpython${minor}-minimal`,
  `libpython${minor}-stdlib`,
  `libpython${minor}`,
  `libpython${minor}-dev`,
]
// Where lib-dynload's NEEDED sonames come from in Debian 12.
const LIBRARY_DEBS = [
  'libssl3',
  'libffi8',
  'libexpat1',
  'zlib1g',
  'liblzma5',
  'libbz2-1.0',
  'libsqlite3-0',
  'libuuid1',
  'libncursesw6',
  'libtinfo6',
  'libreadline8',
  'libgdbm6',
  'libgdbm-compat4',
  'libcrypt1',
]
// glibc's libraries and the C/C++ runtimes: every machine of the target has them (Node needs them too).
const SYSTEM_SONAMES =
  /^(libc|libm|libpthread|libdl|librt|libutil|libresolv|libgcc_s|libstdc\+\+)\.so\.|^ld-linux/

export type DebianStageOptions = {
  out?: string
  force?: boolean
  minor?: string
  onProgress?: OnProgress
}

function debVersion(deb: string): string {
  return execFileSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).trim()
}

// apt-get download into cacheDir; reuses what is there.
async function download(names: string[], target: Target, cacheDir: string): Promise<string[]> {
  mkdirSync(cacheDir, { recursive: true })
  const want = names.map((n) => `${n}:${target.debianArch}`)
  const have = (n: string) =>
    readdirSync(cacheDir).find((f) => f.startsWith(`${n}_`) && f.endsWith(`_${target.debianArch}.deb`))
  const missing = names.filter((n) => !have(n))
  if (missing.length) {
    try {
      await run('apt-get', ['download', '-q', ...missing.map((n) => `${n}:${target.debianArch}`)], {
        cwd: cacheDir,
        code: 'dist.stage',
      })
    } catch (err) {
      throw new VisError(
        'dist.stage',
        `apt-get could not download Debian's ${target.debianArch} packages (${want.join(' ')}): ` +
          `run \`dpkg --add-architecture ${target.debianArch} && apt-get update\` first (${(err as Error).message})`,
        { platform: target.tag },
        { cause: err },
      )
    }
  }
  return names.map((n) => join(cacheDir, have(n)!))
}

// Runs a target executable: natively when it is this machine's, else through qemu-user.
function runnerFor(target: Target): string[] {
  if (target.tag === hostTarget().tag) return []
  return [`qemu-${target.seccompArch}-static`]
}

export async function stageFromDebian(target: Target, opts: DebianStageOptions = {}): Promise<StageResult> {
  const onProgress = opts.onProgress ?? noProgress
  const minor = opts.minor ?? target.minors[0]
  if (!target.minors.includes(minor)) {
    throw new VisError(
      'dist.stage',
      `Python ${minor} is not supported on ${target.tag} (${target.minors.join(', ')} ${target.minors.length > 1 ? 'are' : 'is'})`,
      { minor, platform: target.tag },
    )
  }
  const out = opts.out ?? defaultDistDir()
  const debCache = join(out, '.debs', target.debianArch)
  const finalRoot = stagedTreeRoot(out, minor, target.tag)
  onProgress({ step: 'download', detail: `Debian's ${target.debianArch} packages for CPython ${minor}` })
  const debs = await download([...cpythonDebs(minor), ...LIBRARY_DEBS], target, debCache)
  const version = /^(\d+\.\d+\.\d+)/.exec(debVersion(debs[0]!))?.[1]
  if (!version)
    throw new VisError('dist.stage', `cannot read the CPython version of ${debs[0]}`, { path: debs[0] })
  if (!opts.force) {
    try {
      const t = validateTree(finalRoot, { minor, platform: target.tag })
      if (t.version === version) {
        onProgress({
          step: 'stage',
          detail: `Python ${version} for ${target.tag} is already staged at ${finalRoot}`,
        })
        return { root: finalRoot, version, minor, platform: target.tag, skipped: true }
      }
    } catch {
      // Missing or different: stage it.
    }
  }
  cleanStaleSiblings(finalRoot)
  const tmp = siblingTemp(finalRoot)
  const sysroot = `${tmp}.sysroot`
  try {
    mkdirSync(sysroot, { recursive: true })
    for (const deb of debs) await run('dpkg-deb', ['-x', deb, sysroot], { code: 'dist.stage' })
    const libraries = await buildTree(sysroot, tmp, minor, target, onProgress)
    const manifest: DistManifest = {
      version,
      minor,
      platform: target.tag,
      source: `debian:${debs
        .slice(0, cpythonDebs(minor).length)
        .map((d) => basename(d))
        .join(',')}`,
      packages: [],
      libraries,
      created: new Date().toISOString(),
    }
    writeManifest(tmp, manifest)
    onProgress({ step: 'check', detail: 'running the staged interpreter' })
    await slimCheckForeign(tmp, minor, version, target)
    validateTree(tmp, { minor, platform: target.tag })
    const archivesDir = join(out, 'archives')
    mkdirSync(archivesDir, { recursive: true })
    const file = archiveFileFor(archivesDir, version, target.tag)
    onProgress({ step: 'archive', detail: `packing ${file}` })
    const { sha256, size } = await packTree(tmp, file)
    writeArchiveManifests(archivesDir, {
      version,
      minor,
      platform: target.tag,
      file: basename(file),
      sha256,
      size,
      packages: [],
    })
    writeManifest(tmp, { ...manifest, sha256 })
    replaceInPlace(tmp, finalRoot)
    onProgress({ step: 'stage', detail: `staged Python ${version} for ${target.tag} at ${finalRoot}` })
    return { root: finalRoot, version, minor, platform: target.tag, skipped: false, archive: file, sha256 }
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true })
    throw err
  } finally {
    rmSync(sysroot, { recursive: true, force: true })
  }
}

async function buildTree(
  sysroot: string,
  root: string,
  minor: string,
  target: Target,
  onProgress: OnProgress,
): Promise<string[]> {
  const p = treePaths(root, minor)
  const multi = join(sysroot, 'usr', 'lib', target.multiarch)
  mkdirSync(p.bin, { recursive: true })
  mkdirSync(p.lib, { recursive: true })
  onProgress({ step: 'copy', detail: 'stdlib, lib-dynload, libpython and headers' })
  copyStdlib(join(sysroot, 'usr', 'lib', `python${minor}`), p.stdlib)
  // Debian keeps lib-dynload inside the stdlib; copyStdlib took it, copyExtensionDir drops the test modules.
  rmSync(p.libDynload, { recursive: true, force: true })
  copyExtensionDir(join(sysroot, 'usr', 'lib', `python${minor}`, 'lib-dynload'), p.libDynload)
  for (const f of readdirSync(p.libDynload)) if (DROPPED_MODULES.test(f)) rmSync(join(p.libDynload, f))
  mkdirSync(p.sitePackages, { recursive: true })
  writeFileSync(
    join(p.sitePackages, 'README.txt'),
    'Packages here are installed by vis-runtime staging only; no .pth files.\n',
  )
  copyFileSync(join(multi, `libpython${minor}.so.1.0`), p.libpython)
  symlinkSync(`libpython${minor}.so.1.0`, join(p.lib, `libpython${minor}.so`))
  cpSync(join(sysroot, 'usr', 'include', `python${minor}`), p.include, { recursive: true, dereference: true })
  // Debian's pyconfig.h is a multiarch wrapper; take the architecture's own.
  copyFileSync(
    join(sysroot, 'usr', 'include', target.multiarch, `python${minor}`, 'pyconfig.h'),
    join(p.include, 'pyconfig.h'),
  )
  await buildExecutable(p, minor, target)
  symlinkSync(`python${minor}`, join(p.bin, 'python3'))
  symlinkSync(`python${minor}`, join(p.bin, 'python'))

  onProgress({ step: 'strip', detail: `${target.crossTriple}-strip --strip-debug` })
  const objects = [p.executable, p.libpython, ...listFiles(p.libDynload, (n) => n.endsWith('.so'))]
  await run(stripFor(target), ['--strip-debug', ...objects], { code: 'dist.stage' })

  // After strip: strip rewrites the sections patchelf moved, and breaks the object.
  onProgress({ step: 'libraries', detail: 'shared libraries the interpreter and lib-dynload need' })
  const libraries = await placeLibraries(sysroot, p, target)

  onProgress({
    step: 'compile',
    detail: 'compiling .pyc files with this machine’s CPython of the same minor',
  })
  // Bytecode is the same on every architecture of a minor; unchecked-hash .pyc stay valid wherever the tree goes.
  const local = findLocalPython(minor)
  if (!local) {
    throw new VisError(
      'dist.stage',
      `compiling the ${target.tag} stdlib needs a CPython ${minor} on this machine; stage it first (\`vis runtime stage --python ${minor}\`)`,
      { minor },
    )
  }
  await compileStdlib(local.executable, p.stdlib)
  return libraries
}

// Extension modules left out: nis (deprecated since 3.11, gone in 3.13) pulls in Kerberos and
// libtirpc, _dbm Berkeley DB; together 4 MB of libraries, and the archive stays under the 15 MB a
// bundle takes per minor. dbm.gnu and dbm.dumb remain.
const DROPPED_MODULES = /^(nis|_dbm)\./

// A small bin/python3.X linked to the tree's libpython (scripts/python-main.c; outside native/, whose sources date the prebuilds).
async function buildExecutable(
  p: ReturnType<typeof treePaths>,
  minor: string,
  target: Target,
): Promise<void> {
  const source = join(packageRoot, 'scripts', 'python-main.c')
  const cc = target.tag === hostTarget().tag ? 'cc' : `${target.crossTriple}-gcc`
  await run(
    cc,
    [
      '-O2',
      '-o',
      p.executable,
      source,
      `-I${p.include}`,
      `-L${p.lib}`,
      `-lpython${minor}`,
      // libpython's own NEEDED (libexpat, libz) are resolved at run time through its RUNPATH.
      '-Wl,--allow-shlib-undefined',
      '-Wl,-rpath,$ORIGIN/../lib',
    ],
    { code: 'dist.stage' },
  )
}

function stripFor(target: Target): string {
  return target.tag === hostTarget().tag ? 'strip' : `${target.crossTriple}-strip`
}

// Copies every non-system library the interpreter, libpython and lib-dynload need (transitively)
// into lib/deps and points each object at it with an $ORIGIN-relative RUNPATH. An extension module
// whose library the packages do not provide is dropped (named in the returned list's report).
async function placeLibraries(
  sysroot: string,
  p: ReturnType<typeof treePaths>,
  target: Target,
): Promise<string[]> {
  const depsDir = join(p.lib, 'deps')
  const index = indexSysroot(sysroot, target)
  const objects = [p.libpython, ...listFiles(p.libDynload, (n) => n.endsWith('.so'))]
  const copied = new Set<string>()
  const patch = new Set<string>()
  const unresolved = new Map<string, string>()
  let queue = [...(await neededOf(objects)).entries()]
  while (queue.length) {
    const fresh: string[] = []
    for (const [file, needed] of queue) {
      for (const so of needed) {
        if (so.startsWith('libpython') || SYSTEM_SONAMES.test(so)) continue
        patch.add(file)
        if (copied.has(so)) continue
        const src = index.get(so)
        if (!src) {
          unresolved.set(file, so)
          continue
        }
        mkdirSync(depsDir, { recursive: true })
        copyFileSync(src, join(depsDir, so))
        copied.add(so)
        fresh.push(join(depsDir, so))
      }
    }
    queue = fresh.length ? [...(await neededOf(fresh)).entries()] : []
  }
  for (const [file, so] of unresolved) {
    if (dirname(file) !== p.libDynload) {
      throw new VisError(
        'dist.stage',
        `${basename(file)} needs ${so}, which no downloaded package provides`,
        {
          path: file,
        },
      )
    }
    rmSync(file)
    patch.delete(file)
  }
  for (const file of patch) {
    const rel = relative(dirname(file), depsDir)
    const runpath = rel === '' ? '$ORIGIN' : `$ORIGIN/${rel}`
    await run('patchelf', ['--set-rpath', runpath, file], { code: 'dist.stage' })
  }
  return [...copied].sort()
}

// The probe of smoke.ts, run through qemu-user for a foreign target.
async function slimCheckForeign(root: string, minor: string, version: string, target: Target): Promise<void> {
  const exe = treePaths(root, minor).executable
  const probe =
    'import sys, json, ssl, sqlite3, ctypes, zlib, hashlib, decimal, lzma, bz2, uuid; ' +
    'print(json.dumps({"version": sys.version.split()[0], "prefix": sys.prefix}))'
  const [runner, ...rest] = [...runnerFor(target), exe, '-I', '-S', '-c', probe]
  const outText = await run(runner!, rest, { env: cleanPythonEnv(), code: 'dist.stage' })
  const got = JSON.parse(outText) as { version: string; prefix: string }
  if (got.version !== version) {
    throw new VisError('dist.stage', `${exe} reports ${got.version}, expected ${version}`, { path: exe })
  }
  if (
    !readFileSync(exe)
      .subarray(0, 4)
      .equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))
  )
    throw new VisError('dist.stage', `${exe} is not an ELF executable`, { path: exe })
  if (!existsSync(join(root, 'lib', `python${minor}`, 'os.py')))
    throw new VisError('dist.stage', `${root} has no stdlib`, { path: root })
}
