import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { VisError } from '../util/errors.js'
import { sandboxWritableHolding } from '../util/writable-roots.js'

// What a local CPython says about its own layout. Asked of the interpreter
// itself (sysconfig), never guessed from paths.
const SysconfigSchema = z.object({
  version: z.string(),
  minor: z.string(),
  executable: z.string(),
  prefix: z.string(),
  libdir: z.string(),
  ldlibrary: z.string().nullable(),
  instsoname: z.string().nullable(),
  shared: z.boolean(),
  stdlib: z.string(),
  platstdlib: z.string(),
  destshared: z.string().nullable(),
  include: z.string(),
  platinclude: z.string(),
})
export type LocalPython = z.infer<typeof SysconfigSchema> & { libpython: string }

// A constant probe, not assembled from values: it prints one JSON object.
const PROBE = [
  'import json, sys, sysconfig, platform',
  'v = sysconfig.get_config_var',
  'p = sysconfig.get_paths()',
  'print(json.dumps({',
  ' "version": platform.python_version(),',
  ' "minor": "%d.%d" % sys.version_info[:2],',
  ' "executable": sys.executable,',
  ' "prefix": sys.prefix,',
  ' "libdir": v("LIBDIR"),',
  ' "ldlibrary": v("LDLIBRARY"),',
  ' "instsoname": v("INSTSONAME"),',
  ' "shared": bool(v("Py_ENABLE_SHARED")),',
  ' "stdlib": p["stdlib"],',
  ' "platstdlib": p["platstdlib"],',
  ' "destshared": v("DESTSHARED"),',
  ' "include": p["include"],',
  ' "platinclude": p["platinclude"],',
  '}))',
].join('\n')

export function probePython(python: string): LocalPython {
  let out: string
  try {
    // -I: no user site, no PYTHON* variables, so we see the install as shipped.
    out = execFileSync(python, ['-I', '-c', PROBE], { encoding: 'utf8', timeout: 30_000 })
  } catch (err) {
    throw new VisError('dist.stage', `could not run ${python}: ${(err as Error).message}`, { path: python })
  }
  const info = SysconfigSchema.parse(JSON.parse(out))
  const soname = info.instsoname ?? `libpython${info.minor}.so.1.0`
  const libpython = join(info.libdir, soname)
  if (!existsSync(libpython)) {
    throw new VisError(
      'dist.stage',
      `${python} has no shared libpython (${libpython} is missing); build CPython with --enable-shared or install libpython${info.minor}`,
      { path: python },
    )
  }
  return { ...info, libpython }
}

function byVersionDesc(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10))
  const pb = b.split('.').map((x) => Number.parseInt(x, 10))
  for (let i = 0; i < 3; i++) {
    const d = (pb[i] ?? 0) - (pa[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

// Candidate interpreters for a minor: pyenv's real binaries (never its shims,
// which cost ~50 ms a start), then the system's.
export function localPythonCandidates(minor: string): string[] {
  const out: string[] = []
  const pyenvRoot = process.env.PYENV_ROOT ?? join(homedir(), '.pyenv')
  const versions = join(pyenvRoot, 'versions')
  if (existsSync(versions)) {
    const names = readdirSync(versions)
      .filter((n) => n.startsWith(`${minor}.`) && /^\d+\.\d+\.\d+$/.test(n))
      .sort(byVersionDesc)
    for (const n of names) out.push(join(versions, n, 'bin', `python${minor}`))
  }
  out.push(`/usr/local/bin/python${minor}`, `/usr/bin/python${minor}`)
  return out.filter((p) => existsSync(p)).map((p) => realpathSync(p))
}

// Why the host must not run the interpreter at `python` nor copy what it names as its own
// (executable, libpython, standard library), or undefined. A sandbox can write a session's root and
// every vis home: with a session on HOME, a block writes ~/.pyenv/versions/3.12.99/bin/python3.12,
// which sorts first (thirteenth outsider pass). Judged by path and real path, before the run, and
// again on what the interpreter reports, before anything is copied.
export function pythonPlaceRefusal(python: string, info?: LocalPython): VisError | undefined {
  const paths = [python, ...(info ? [info.executable, info.libpython, info.stdlib, info.platstdlib] : [])]
  for (const p of paths) {
    const held = sandboxWritableHolding(p)
    if (held === undefined) continue
    const where = held.home
      ? `the vis home ${held.place}`
      : `${held.place}, a root a session of this or another vis process can write`
    return new VisError(
      'dist.python-in-root',
      `the local CPython ${python} (${p}) lies inside ${where}, so the host does not run or copy it: a sandbox ` +
        'could have put it there. Install CPython outside every session root (or stop that session) and stage ' +
        'again, or use --from-archive.',
      { path: python, root: held.place },
    )
  }
  return undefined
}

// The first candidate for the minor that has a shared libpython and lies outside every place a
// sandbox writes; the candidates passed over for their place are added to `refused`.
export function findLocalPython(minor: string, refused: VisError[] = []): LocalPython | undefined {
  for (const candidate of localPythonCandidates(minor)) {
    const before = pythonPlaceRefusal(candidate)
    if (before !== undefined) {
      refused.push(before)
      continue
    }
    try {
      const info = probePython(candidate)
      const after = pythonPlaceRefusal(candidate, info)
      if (after !== undefined) {
        refused.push(after)
        continue
      }
      if (info.minor === minor) return info
    } catch {
      // Not shared or not runnable: try the next one.
    }
  }
  return undefined
}
