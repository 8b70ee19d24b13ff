// Checks one root as a session's creation does and prints the refusal's code, or "ok": run in a
// private mount namespace by roots.test.ts, where the root may be a pseudo-filesystem mount.
import { checkRootPaths } from '../../src/confinement/root-guard.js'
import { isVisError } from '../../src/util/errors.js'

try {
  checkRootPaths([process.argv[2] as string], {})
  console.log('ok')
} catch (err) {
  if (!isVisError(err)) throw err
  console.log(`${err.code}: ${err.message}`)
}
