import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { VisError } from '../util/errors.js'
import { minorOf, platformTag } from './platform.js'
import type { ValidTree } from './validate.js'

// A "built checkout" is a CPython source tree configured with
// --enable-shared and built in place (`./configure --enable-shared && make`),
// named by VIS_PYTHON_CHECKOUT. It is not in install_only layout: the stdlib
// is Lib/, extension modules are in the directory pybuilddir.txt names, the
// headers are Include/ plus the generated pyconfig.h at the top. An embedder
// sets PyConfig.executable to <checkout>/python and leaves home unset, so
// getpath recognises the build directory.
export type BuildTree = ValidTree & {
  includeDirs: string[]
  stdlib: string
  libDynload: string
}

export function validateBuildTree(root: string): BuildTree {
  const fail = (why: string): never => {
    throw new VisError(
      'dist.invalid',
      `VIS_PYTHON_CHECKOUT=${root} is not a CPython tree built in place: ${why}`,
      {
        path: root,
      },
    )
  }
  if (!existsSync(root)) fail('it does not exist')
  const patchlevel = join(root, 'Include', 'patchlevel.h')
  if (!existsSync(patchlevel)) fail('Include/patchlevel.h is missing')
  const version = /#define\s+PY_VERSION\s+"(\d+\.\d+\.\d+[a-z0-9+]*)"/.exec(
    readFileSync(patchlevel, 'utf8'),
  )?.[1]
  if (!version) fail('Include/patchlevel.h has no PY_VERSION')
  const minor = minorOf(version!)
  const stdlib = join(root, 'Lib')
  if (!existsSync(join(stdlib, 'os.py'))) fail('Lib/os.py is missing')
  if (!existsSync(join(stdlib, 'encodings', '__init__.py'))) fail('Lib/encodings/__init__.py is missing')
  const libpython = join(root, `libpython${minor}.so.1.0`)
  if (!existsSync(libpython))
    fail(`libpython${minor}.so.1.0 is missing (configure with --enable-shared, then make)`)
  const executable = join(root, 'python')
  if (!existsSync(executable)) fail('the python executable is missing (run make)')
  const builddir = join(root, 'pybuilddir.txt')
  if (!existsSync(builddir)) fail('pybuilddir.txt is missing (run make)')
  const libDynload = join(root, readFileSync(builddir, 'utf8').trim())
  if (!existsSync(libDynload)) fail(`${libDynload} (from pybuilddir.txt) is missing`)
  const platform = platformTag()
  return {
    root,
    version: version!,
    minor,
    platform,
    libpython,
    executable,
    include: join(root, 'Include'),
    includeDirs: [join(root, 'Include'), root],
    stdlib,
    libDynload,
    manifest: { version: version!, minor, platform, source: `checkout:${root}`, packages: [] },
  }
}
