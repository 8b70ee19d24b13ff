import { spawnSync } from 'node:child_process'
import { errorMessage } from '../util/errors.js'
import { addonFile, runtimeAddonPath } from './addon.js'

// Loads the loader, the libpython and the runtime addon the way a session worker does, in a
// child: two minors' libpython cannot share a process, and a broken addon may crash it.
const LOAD = `const [loader, lib, addon] = process.argv.slice(1)
require(loader).load(lib)
process.stdout.write(require(addon).pythonMinor())`

export type AddonLoad = { ok: true; file: string } | { ok: false; message: string }

export function checkRuntimeAddon(minor: string, libpython: string): AddonLoad {
  let file: string
  try {
    file = runtimeAddonPath(minor)
  } catch (err) {
    return { ok: false, message: errorMessage(err) }
  }
  const loader = addonFile('vis_loader')
  if (!loader) return { ok: false, message: 'the loader addon (vis_loader.node) is not built' }
  const r = spawnSync(process.execPath, ['-e', LOAD, loader, libpython, file], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  if (r.status === 0 && r.stdout === minor) return { ok: true, file }
  const why =
    r.error?.message ??
    (r.stderr.split('\n').find((l) => /Error/.test(l)) ||
      (r.signal ? `killed by ${r.signal}` : `exit status ${r.status}, said "${r.stdout}"`))
  return { ok: false, message: `${file} does not load for Python ${minor}: ${why}` }
}
