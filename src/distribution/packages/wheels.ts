import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { VisError } from '../../util/errors.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'
import { isolatedPythonEnv } from '../../util/tool-home.js'
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
    return ['--no-index', '--find-links', dir]
  }
  if (!/^https?:\/\//.test(u)) {
    throw new VisError('dist.wheels', `--index-url ${u}: give an http(s) URL or a directory of wheels`, {
      url: u,
    })
  }
  return ['--index-url', u]
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
