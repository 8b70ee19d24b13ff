import { realpathSync } from 'node:fs'
import { VisError } from '../util/errors.js'
import { treePaths } from './layout.js'
import { cleanPythonEnv, run } from './tools.js'

// Imports that need lib-dynload and the host's shared libraries; a tree that
// cannot do these is not worth shipping.
const PROBE =
  'import sys, json, ssl, sqlite3, ctypes, zlib, hashlib, decimal; ' +
  'print(json.dumps({"version": sys.version.split()[0], "prefix": sys.prefix}))'

// Runs the tree's own interpreter with a clean environment (and no site) and checks it
// reports the expected version from the expected prefix.
export async function slimCheck(root: string, minor: string, version: string): Promise<void> {
  const exe = treePaths(root, minor).executable
  // -S: the probe's imports and sys.prefix come from the stdlib and getpath, not site; without it
  // site.py would run the tree's site-packages (a wheel's sitecustomize, a .pth) on the host
  // (fourteenth outsider pass). The wheel step refuses such files too; this keeps the check from
  // being where they would run.
  const out = await run(exe, ['-I', '-S', '-c', PROBE], { env: cleanPythonEnv(), code: 'dist.stage' })
  const got = JSON.parse(out) as { version: string; prefix: string }
  if (got.version !== version) {
    throw new VisError('dist.stage', `${exe} reports ${got.version}, expected ${version}`, { path: exe })
  }
  if (realpathSync(got.prefix) !== realpathSync(root)) {
    throw new VisError('dist.stage', `${exe} took its prefix from ${got.prefix}, not ${root}`, { path: exe })
  }
}
