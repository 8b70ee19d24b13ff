import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { VisError } from '../../util/errors.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'
import { isolatedPythonEnv } from '../../util/tool-home.js'
import { writableRootHolding } from '../../util/writable-roots.js'
import type { OnProgress } from '../progress.js'
import { run } from '../tools.js'

// Wheels from a package index (a PEP 503 "simple" URL) or a local directory of .whl
// files, for any minor. pip is the resolver and installer (as apt is for the Debian
// path): it runs on the host with --target and the distribution's tags, so it never
// builds anything (--only-binary) and never runs the package's code.

export type WheelSource = { indexUrl: string }

// A directory given as the index is searched for wheels with no index at all.
function sourceArgs(src: WheelSource): string[] {
  const u = src.indexUrl
  if (u.startsWith('file://') || u.startsWith('/') || u.startsWith('.')) {
    // Absolute: pip runs in a folder of its own, not the caller's.
    const dir = resolve(u.startsWith('file://') ? new URL(u).pathname : u)
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new VisError('dist.wheels', `the wheel directory ${dir} does not exist`, { path: dir })
    }
    judgeWheelDir(u, dir)
    return ['--no-index', '--find-links', dir]
  }
  if (!/^https?:\/\//.test(u)) {
    throw new VisError('dist.wheels', `--index-url ${u}: give an http(s) URL or a directory of wheels`, {
      url: u,
    })
  }
  return ['--index-url', u]
}

// A local wheel directory is judged as a `--from-archive` file is (dist.source-in-root): a folder in
// a root a sandbox writes (a project's wheels/ in a session's root) holds wheels a block chose, and
// the staged tree is run by the host (its compile, its check) and shipped. The folder is judged by
// its path and real path, and so is each entry in it (a link to a wheel in a root reads that wheel).
// pip reads the folder after this check; a folder outside every root is one no sandbox can change.
function judgeWheelDir(url: string, dir: string): void {
  let names: string[] = []
  try {
    names = readdirSync(dir)
  } catch {
    // unreadable: pip says so
  }
  for (const path of [dir, ...names.map((n) => join(dir, n))]) {
    const root = writableRootHolding(path)
    if (root === undefined) continue
    throw new VisError(
      'dist.source-in-root',
      `the wheel directory ${dir} (--index-url ${url}) holds ${path}, which lies inside ${root}, a root a ` +
        'session of this or another vis process can write, so the host does not install from it: a sandbox ' +
        'could have chosen the code the staged Python runs. Move the wheels outside every session root and ' +
        'give that folder as --index-url. Nothing was staged.',
      { op: 'stage-wheels', url, path, root },
    )
  }
}

// Names site.py imports at every interpreter start, `-I` included (isolated mode skips the user
// site and the cwd, not site-packages): in any form, a module (.py, .pyc, an extension .so) or a
// package directory. The stdlib copy drops them (slim.ts DROP_FILES); a wheel may hold them too.
const STARTUP_HOOK = /^(sitecustomize|usercustomize)(\.|$)/

// The top-level names in the pip target that site.py would run at start: a package dir or module
// named sitecustomize/usercustomize, or one in __pycache__ (a .pyc there is loaded for a source
// beside it; refused as well so no form is left).
function startupHooks(target: string): string[] {
  const out = readdirSync(target).filter((n) => STARTUP_HOOK.test(n))
  const cache = join(target, '__pycache__')
  if (existsSync(cache))
    for (const n of readdirSync(cache)) if (STARTUP_HOOK.test(n)) out.push(`__pycache__/${n}`)
  return out
}

// Which installed distributions list `file` (a top-level name) in their RECORD: the wheels to name.
function ownersOf(target: string, file: string): string[] {
  const out: string[] = []
  for (const d of readdirSync(target)) {
    const m = /^(.+)-([^-]+)\.dist-info$/.exec(d)
    if (!m) continue
    let record = ''
    try {
      record = readFileSync(join(target, d, 'RECORD'), 'utf8')
    } catch {
      continue
    }
    const listed = record.split('\n').some((line) => {
      const path = line.split(',')[0] ?? ''
      return path === file || path.startsWith(`${file}/`)
    })
    if (listed) out.push(`${m[1]} ${m[2]}`)
  }
  return out
}

// Where pip runs: its cwd and HOME in a fresh folder of the host's. Python started with -I puts
// neither the cwd nor the user site (~/.local's .pth files run at start) on sys.path and ignores
// PYTHON* variables, and pip's --isolated ignores PIP_* and its config files: a session's root
// may be the folder `vis runtime stage` was started in (a block's W/pip/__main__.py would be the
// `-m pip` run) or the person's HOME (thirteenth outsider pass).
type PipPlace = { cwd: string; env: NodeJS.ProcessEnv }

// A pip that runs: the given interpreter's, else python3's.
async function findPip(candidates: readonly string[], at: PipPlace): Promise<string> {
  for (const py of [...candidates, 'python3']) {
    try {
      await run(py, ['-I', '-m', 'pip', '--version'], { code: 'dist.wheels', ...at })
      return py
    } catch {
      // next
    }
  }
  throw new VisError(
    'dist.wheels',
    `installing wheels needs pip on this machine (tried ${[...candidates, 'python3'].join(', ')} -m pip)`,
    {},
  )
}

// Installs `requirements` (and their dependencies) for `minor` into sitePackages.
// Returns "name version" labels from the installed dist-info directories.
export async function installWheels(
  requirements: readonly string[],
  minor: string,
  sitePackages: string,
  src: WheelSource,
  opts: { python?: string; onProgress: OnProgress },
): Promise<string[]> {
  if (requirements.length === 0) return []
  const work = makeHostStateDir('vis-wheels-')
  const target = join(work, 'target')
  const at: PipPlace = { cwd: join(work, 'cwd'), env: isolatedPythonEnv(join(work, 'home')) }
  mkdirSync(target)
  mkdirSync(at.cwd)
  try {
    const py = await findPip(opts.python ? [opts.python] : [], at)
    const nodot = minor.replace('.', '')
    opts.onProgress({ step: 'wheels', detail: `pip: ${requirements.join(', ')} for CPython ${minor}` })
    const args = [
      '-I',
      '-m',
      'pip',
      'install',
      '--isolated',
      '--no-cache-dir',
      '--disable-pip-version-check',
      '--no-input',
      '--no-compile',
      '--no-warn-script-location',
      '--target',
      target,
      '--only-binary',
      ':all:',
      '--python-version',
      minor,
      '--implementation',
      'cp',
      '--abi',
      `cp${nodot}`,
      '--abi',
      'abi3',
      '--abi',
      'none',
      ...['manylinux_2_28_x86_64', 'manylinux_2_17_x86_64', 'manylinux2014_x86_64', 'linux_x86_64'].flatMap(
        (p) => ['--platform', p],
      ),
      ...sourceArgs(src),
      ...requirements,
    ]
    try {
      await run(py, args, { code: 'dist.wheels', timeoutMs: 600_000, ...at })
    } catch (err) {
      throw new VisError(
        'dist.wheels',
        `pip could not install ${requirements.join(', ')} for CPython ${minor} from ${src.indexUrl}: ${(err as Error).message}`,
        { url: src.indexUrl },
      )
    }
    // A wheel holding a startup hook is refused, the whole stage with it, rather than the file
    // dropped: the package was built to run that code at every start, so a tree without it is not
    // what was asked for, and a person should see which wheel did this (fourteenth outsider pass: a
    // block's wheel in W/wheels put sitecustomize.py in site-packages and the host's compile and
    // check of the staged tree ran it).
    const hooks = startupHooks(target)
    if (hooks.length > 0) {
      const owners = [...new Set(hooks.flatMap((h) => ownersOf(target, h)))]
      throw new VisError(
        'dist.wheel-startup-hook',
        `the wheels for ${requirements.join(', ')} from ${src.indexUrl} install ${hooks.join(', ')} into ` +
          `site-packages${owners.length ? ` (from ${owners.join(', ')})` : ''}: Python runs such a module at ` +
          "every start of the staged interpreter, the host's own checks included, so vis does not ship it. " +
          'Remove that package from --with, or use a build of it without a sitecustomize/usercustomize ' +
          'module. Nothing was staged.',
        { op: 'stage-wheels', url: src.indexUrl, path: hooks[0], requirements: requirements.join(',') },
      )
    }
    const labels: string[] = []
    for (const name of readdirSync(target)) {
      // Console scripts would point at a python that is not the distribution's; .pth
      // files are code run at every start (runtime-notes section 2): neither ships.
      if (name === 'bin' || name.endsWith('.pth')) continue
      const m = /^(.+)-([^-]+)\.dist-info$/.exec(name)
      if (m) labels.push(`${m[1]!.toLowerCase().replace(/_/g, '-')} ${m[2]} (wheel)`)
      const dst = join(sitePackages, name)
      rmSync(dst, { recursive: true, force: true })
      renameSync(join(target, name), dst)
    }
    return labels.sort()
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
