import { protectRuntimeTree } from '../confinement/runtime-trees.js'
import { resolveDistribution } from '../distribution/resolve.js'

export type PythonHome = { root: string; minor: string; executable: string }

const resolved = new Map<string, Promise<PythonHome>>()

// The distribution a worker runs, resolved once per minor in the host: its root goes to
// the child (VIS_PYTHON_HOME) and into the jail's read-only paths.
export function pythonHome(minor: string | undefined): Promise<PythonHome> {
  const key = minor ?? ''
  let p = resolved.get(key)
  if (!p) {
    p = resolveDistribution(minor ? { minor } : {}).then((d) => {
      // The host runs this tree: no session may have a root inside it (root-guard.ts).
      protectRuntimeTree(d.root)
      return { root: d.root, minor: d.minor, executable: d.executable }
    })
    resolved.set(key, p)
    p.catch(() => resolved.delete(key))
  }
  return p
}
