// `vis serve`'s cluster flags: accepted forms, and each bad one refused naming the flag.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clusterOptionsFrom } from '../../src/cluster/start.js'
import { isVisError } from '../../src/util/errors.js'

const refused = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e) => isVisError(e, 'cli.bad-option') && pattern.test(e.message))

describe('cluster options', () => {
  it('none given: not a cluster node', () => {
    assert.equal(clusterOptionsFrom({}, {}), undefined)
  })

  it('flags, or the environment, make a node; flags win', () => {
    assert.deepEqual(clusterOptionsFrom({ 'node-id': 'n1', advertise: 'http://10.0.0.11:7878' }, {}), {
      nodeId: 'n1',
      advertise: 'http://10.0.0.11:7878',
      leaseMs: 10_000,
    })
    const env = { VIS_NODE_ID: 'env-1', VIS_NODE_URL: 'http://vis-1.internal:7878/', VIS_LEASE_MS: '3000' }
    assert.deepEqual(clusterOptionsFrom({}, env), {
      nodeId: 'env-1',
      advertise: 'http://vis-1.internal:7878/',
      leaseMs: 3000,
    })
    assert.equal(clusterOptionsFrom({ 'node-id': 'flag-1' }, env)?.nodeId, 'flag-1')
  })

  it('refuses half a configuration and bad values, naming the flag', () => {
    refused(() => clusterOptionsFrom({ 'node-id': 'n1' }, {}), /--advertise URL/)
    refused(() => clusterOptionsFrom({ 'lease-ms': '2000' }, {}), /--node-id .* --advertise/)
    refused(() => clusterOptionsFrom({ 'node-id': 'n 1', advertise: 'http://a:1' }, {}), /--node-id: letters/)
    refused(() => clusterOptionsFrom({ 'node-id': 'n1', advertise: 'a:1' }, {}), /--advertise: /)
    refused(
      () => clusterOptionsFrom({ 'node-id': 'n1', advertise: 'http://a:1/v1' }, {}),
      /--advertise: .*no path/,
    )
    refused(
      () => clusterOptionsFrom({ 'node-id': 'n1', advertise: 'http://a:1', 'lease-ms': '50' }, {}),
      /--lease-ms: /,
    )
    refused(
      () => clusterOptionsFrom({ 'node-id': 'n1', advertise: 'http://a:1', 'lease-ms': 'soon' }, {}),
      /--lease-ms: /,
    )
  })
})
