// A root that is the vis-runtime package itself (`vis run` in its own checkout). Roots are
// mounted noexec; the package's native parts under such a root must still be mapped by the
// worker (it failed with "failed to map segment from shared object"), and stay read-only to the
// sandbox, so a block cannot replace the runtime's own code.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { localBuildDir, prebuildsRoot } from '../../src/native/locate.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { packageRoot } from '../../src/util/home.js'
import { python, tempHome } from './helpers.js'

const { home } = tempHome('root-package')
let rt: Runtime
before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

test('a session rooted at the package itself runs, and its native parts are read-only to it', async () => {
  const s = await rt.createSession({ roots: [packageRoot] })
  try {
    assert.equal((await s.runBlock('1 + 1')).result, 2)
    const native = [localBuildDir(), prebuildsRoot()].find((d) => existsSync(d))
    assert.ok(native, 'a checkout or an install has its native parts somewhere')
    const write = await s.runBlock(`open(${JSON.stringify(join(native, 'vis-test-write'))}, "w")`)
    assert.match(write.error?.message ?? '', /Read-only file system/, JSON.stringify(write))
    assert.equal(existsSync(join(native, 'vis-test-write')), false)
  } finally {
    await s.dispose()
  }
})
