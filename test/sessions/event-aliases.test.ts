// The library's Session events are dotted (src/util/event-names.ts); a listener that still names
// the 0.1 kebab event gets the same event until 0.3.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { SessionEvent } from '../../src/sessions/events.js'
import { python, tempHome } from './helpers.js'

const { home, root } = tempHome('event-aliases')
let rt: Runtime

before(async () => {
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
})

test('Session.on takes the dotted names and, deprecated, the kebab ones for the same events', async () => {
  const s = await rt.createSession({ roots: [root] })
  const all: SessionEvent[] = []
  const dotted: SessionEvent[] = []
  const kebab: SessionEvent[] = []
  const offs = [
    s.subscribe((ev) => all.push(ev)),
    s.on('block.started', (ev) => dotted.push(ev)),
    s.on('block.finished', (ev) => dotted.push(ev)),
    s.on('block-started', (ev) => kebab.push(ev)),
    s.on('block-finished', (ev) => kebab.push(ev)),
  ]
  await s.runBlock('print("hi")')
  for (const off of offs) off()
  assert.deepEqual(
    all.map((e) => e.type),
    ['block.started', 'output', 'block.finished'],
  )
  assert.deepEqual(
    dotted.map((e) => e.type),
    ['block.started', 'block.finished'],
  )
  assert.deepEqual(kebab, dotted, 'the same event objects, in the same order')
  await s.dispose()
})
