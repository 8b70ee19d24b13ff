// issue 37: every per-platform decision comes from one row of TARGETS (src/distribution/platform.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { archiveName } from '../../src/distribution/layout.js'
import { hostTarget, SUPPORTED_MINORS, TARGETS, targetFor } from '../../src/distribution/platform.js'
import { prebuildPath } from '../../src/native/locate.js'
import { isVisError } from '../../src/util/errors.js'

test('this machine is linux-x86_64-gnu; its minors are the supported ones', () => {
  const t = hostTarget()
  assert.equal(t.tag, 'linux-x86_64-gnu')
  assert.equal(t.nodeTuple, `${process.platform}-${process.arch}`)
  assert.deepEqual([...SUPPORTED_MINORS], [...t.minors])
})

test('arm64 is named by its triple or its node tuple, and supports 3.11 only', () => {
  const a = targetFor('linux-aarch64-gnu')
  assert.equal(targetFor('linux-arm64'), a)
  assert.deepEqual([...a.minors], ['3.11'])
  assert.equal(a.seccompArch, 'aarch64')
  assert.ok(a.jailLibs.includes('/usr/lib/aarch64-linux-gnu'))
  assert.ok(a.jailLibs.includes('/usr/lib/ld-linux-aarch64.so.1'), 'the aarch64 loader lives in /usr/lib')
  assert.equal(archiveName('3.11.2', a.tag), 'cpython-3.11.2-linux-aarch64-gnu.tar.gz')
  assert.equal(
    prebuildPath('vis_py311', 'node.napi.glibc.node', a),
    'vis_py311/prebuilds/linux-arm64/node.napi.glibc.node',
  )
  assert.equal(prebuildPath('vis-launcher', 'vis-launcher'), 'vis-launcher/prebuilds/linux-x64/vis-launcher')
})

test('an unknown platform is refused with dist.platform, naming the supported ones', () => {
  assert.throws(
    () => targetFor('darwin-arm64'),
    (e: unknown) =>
      isVisError(e) &&
      e.code === 'dist.platform' &&
      e.message.includes('linux-x86_64-gnu') &&
      e.message.includes('linux-aarch64-gnu'),
  )
  assert.equal(new Set(TARGETS.map((t) => t.tag)).size, TARGETS.length)
})
