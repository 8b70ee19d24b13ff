// ATTACK (surface 1, egress spellings): SECURITY.md says IPv6 forms that carry an IPv4 address
// are never less refused than what they carry, and that `::/0` admits no loopback or RFC 1918
// address. The evaluator decodes the well-known NAT64 prefix 64:ff9b::/96 but not the
// local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215, the one operators deploy for their own
// translators): there the carried address is not read at all, so under `allow: ['::/0']`
// (an "every IPv6 destination" entry) the session may dial cloud metadata (169.254.169.254),
// RFC 1918 and loopback through a local NAT64 translator:
//   64:ff9b:1::a9fe:a9fe -> 169.254.169.254, 64:ff9b:1::a00:1 -> 10.0.0.1,
//   64:ff9b:1::7f00:1 -> 127.0.0.1 (the translator's).
// The probe sends nothing; it asks the session's proxy for its decision. On the current code all
// three are "allowed" (64:ff9b::a9fe:a9fe is "never reachable" as it should be).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let root: string
before(async () => {
  const { home } = tempHome('attack-nat64')
  root = mkdtempSync(join(tmpdir(), 'vis-attack-nat64-'))
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  rmSync(root, { recursive: true, force: true })
})

test('addresses carried by the local-use NAT64 prefix are judged by the IPv4 they carry', async () => {
  const s = await rt.createSession({ roots: [root], network: { enabled: true, allow: ['::/0'] } })
  try {
    const targets = ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1::a00:1', '64:ff9b:1::7f00:1', '64:ff9b::a9fe:a9fe']
    const r = await s.runBlock(
      targets.map((t) => `print('TARGET ${t}')\nnetwork_probe('http://[${t}]/latest/meta-data/')`).join('\n'),
    )
    const out = r.stdout ?? ''
    const decisions = Object.fromEntries(
      out
        .split('TARGET ')
        .slice(1)
        .map((chunk) => [chunk.split('\n')[0], /decision: (\w+)/.exec(chunk)?.[1]]),
    )
    assert.deepEqual(decisions, Object.fromEntries(targets.map((t) => [t, 'refused'])), out)
  } finally {
    await s.dispose()
  }
})
