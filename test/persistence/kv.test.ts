import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { KV_MAX_VALUE_BYTES, Store } from '../../src/persistence/index.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, tempPlace } from './helpers.js'

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('an extension key-value store sets, overwrites, lists, deletes and survives a reopen', () => {
      const place = tempPlace(backend)
      let store = new Store(place)
      store.kv.set('weather', 'units', 'metric')
      store.kv.set('weather', 'cache', { berlin: { t: 3.5 }, list: [1, 2, null] })
      store.kv.set('weather', 'units', 'imperial')
      store.kv.set('notes', 'units', 42)
      assert.equal(store.kv.get('weather', 'missing'), undefined)
      store.close()

      store = new Store(place)
      try {
        assert.equal(store.kv.get('weather', 'units'), 'imperial')
        assert.deepEqual(store.kv.get('weather', 'cache'), { berlin: { t: 3.5 }, list: [1, 2, null] })
        assert.equal(store.kv.get('notes', 'units'), 42)
        assert.deepEqual(
          store.kv.list('weather').map((e) => [e.key, e.value]),
          [
            ['cache', { berlin: { t: 3.5 }, list: [1, 2, null] }],
            ['units', 'imperial'],
          ],
        )
        assert.equal(store.kv.delete('weather', 'cache'), true)
        assert.equal(store.kv.delete('weather', 'cache'), false)
        assert.equal(store.kv.clear('weather'), 1)
        assert.deepEqual(store.kv.list('weather'), [])
        assert.equal(store.kv.get('notes', 'units'), 42)
      } finally {
        store.close()
      }
    })

    test('values must be JSON and small; names must be non-empty', () => {
      const store = new Store(tempPlace(backend))
      try {
        assert.throws(
          () => store.kv.set('x', 'k', { when: new Date() }),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        assert.throws(
          () => store.kv.set('x', 'k', Number.NaN),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        assert.throws(
          () => store.kv.set('', 'k', 1),
          (e: unknown) => isVisError(e, 'db.invalid-input'),
        )
        assert.throws(
          () => store.kv.set('x', 'k', 'a'.repeat(KV_MAX_VALUE_BYTES)),
          (e: unknown) => isVisError(e, 'db.kv-too-large') && e.context.extension === 'x',
        )
        assert.equal(store.kv.get('x', 'k'), undefined)
      } finally {
        store.close()
      }
    })
  })
}
