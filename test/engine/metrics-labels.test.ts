// Prometheus label values: plain ones go out as they are (the per-block fast path), the three
// characters the text format reserves are escaped, and a series is keyed by its escaped text.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Counter } from '../../src/engine/metrics.js'

test('label values: plain as is, backslash, newline and quote escaped', () => {
  const c = new Counter('vis_things_total', 'things')
  c.inc({ outcome: 'ok' })
  c.inc({ outcome: 'ok' })
  c.inc({ outcome: 'a\\b\n"c"' })
  c.inc({ outcome: 'é ok' }, 3)
  assert.deepEqual(c.render(), [
    'vis_things_total{outcome="ok"} 2',
    'vis_things_total{outcome="a\\\\b\\n\\"c\\""} 1',
    'vis_things_total{outcome="é ok"} 3',
  ])
  assert.equal(c.get({ outcome: 'a\\b\n"c"' }), 1)
  assert.equal(c.get({ outcome: 'a\\b\\n"c"' }), 0, 'a literal backslash-n is another value')
})
