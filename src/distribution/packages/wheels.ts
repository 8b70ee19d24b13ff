import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../../util/errors.js'
import { makeHostStateDir } from '../../util/host-state-dirs.js'
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
    const dir = u.startsWith('file://') ? new URL(u).pathname : u
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

// A pip that runs: the given interpreter's, else python3's.
async function findPip(candidates: readonly string[]): Promise<string> {
  for (const py of [...candidates, 'python3']) {
    try {
      await run(py, ['-m', 'pip', '--version'], { code: 'dist.wheels' })
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
  const py = await findPip(opts.python ? [opts.python] : [])
  const nodot = minor.replace('.', '')
  const target = makeHostStateDir('vis-wheels-')
  opts.onProgress({ step: 'wheels', detail: `pip: ${requirements.join(', ')} for CPython ${minor}` })
  try {
    const args = [
      '-m',
      'pip',
      'install',
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
      await run(py, args, { code: 'dist.wheels', timeoutMs: 600_000 })
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
    rmSync(target, { recursive: true, force: true })
  }
}
