// Issue 30 §6: a numeric query parameter out of range is the client's mistake, answered 400
// http.invalid-query naming the parameter. `?offset=9223372036854775807` (or `1e20`) passed the
// schema (a JS number past int64) and failed in the database: 500 `datatype mismatch`.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { VisServer } from '../../src/http/server.js'
import { type client, tempHome, testServer } from './helpers.js'

const { home } = tempHome('http-query-bounds')

describe('numeric query parameters are bounded', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    // No session runs code here: no warm worker.
    ;({ server, call } = await testServer({ home, pool: { size: 0 } }))
  })
  after(async () => {
    await server.close()
  })

  test('out of range or not an integer: 400 naming the parameter, never a 500', async () => {
    const cases: [string, string][] = [
      ['offset', '9223372036854775807'],
      ['offset', '9223372036854775808'],
      ['offset', '1e20'],
      ['offset', '-1'],
      ['offset', '1.5'],
      ['offset', 'x'],
      ['limit', '1e20'],
      ['limit', '9223372036854775807'],
      ['limit', '0'],
    ]
    for (const [name, value] of cases) {
      const r = await call('GET', `/v1/sessions?${name}=${value}`)
      assert.equal(r.status, 400, `${name}=${value}: ${r.text}`)
      assert.equal(r.body.error.code, 'http.invalid-query', `${name}=${value}`)
      assert.deepEqual(r.body.error.details.parameters, [name], `${name}=${value}`)
      assert.match(r.body.error.message, new RegExp(`^Invalid query parameter ${name}: `))
    }
    const id = (await call('POST', '/v1/sessions', {})).body.id as string
    for (const value of ['1e20', '99999999999999999999', '-1']) {
      const r = await call('GET', `/v1/sessions/${id}/events?after=${value}`)
      assert.equal(r.status, 400, `after=${value}: ${r.text}`)
      assert.equal(r.body.error.code, 'http.invalid-query')
      assert.deepEqual(r.body.error.details.parameters, ['after'])
    }
  })

  test('in range: answered', async () => {
    const listed = await call('GET', '/v1/sessions?limit=1000&offset=0')
    assert.equal(listed.status, 200, listed.text)
    const far = await call('GET', '/v1/sessions?offset=1000000000')
    assert.equal(far.status, 200, far.text)
    assert.deepEqual(far.body.sessions, [])
  })
})
