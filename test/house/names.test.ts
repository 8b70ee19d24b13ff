// Issue 35's names: a file says what it holds, so no two modules answer to policy.ts,
// outcome.ts or runtime.ts, and a worker's spawn (the static Worker.start) and a request on a
// started worker (send) no longer share a name.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Channel } from '../../src/protocol/channel.js'
import { Worker } from '../../src/worker/worker.js'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name)
    if (d.isDirectory()) return sourceFiles(p)
    return d.name.endsWith('.ts') ? [p] : []
  })
}

test('no module is named policy.ts or outcome.ts, and one runtime.ts (the vis runtime command) remains', () => {
  const files = sourceFiles(src).map((f) => relative(src, f))
  assert.ok(files.length > 300, `only ${files.length} source files found under ${src}`)
  const named = (base: string) => files.filter((f) => f.split('/').at(-1) === base)
  assert.deepEqual(named('policy.ts'), [])
  assert.deepEqual(named('outcome.ts'), [])
  assert.deepEqual(named('runtime.ts'), ['cli/commands/runtime.ts'])
})

test('Worker.start spawns; a started worker and a channel send requests with send(op, params)', () => {
  assert.equal(typeof Worker.start, 'function')
  assert.equal(typeof Worker.prototype.send, 'function')
  assert.equal(Object.hasOwn(Worker.prototype, 'start'), false)
  assert.equal(typeof Channel.prototype.send, 'function')
  assert.equal(Object.hasOwn(Channel.prototype, 'start'), false)
})
