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
// Fixed (address.ts): a special range is named only by an entry inside it; the local-use prefix
// (which cannot be decoded: the operator picks its length) is reachable only through an entry
// inside 64:ff9b:1::/48, and `::/0` no longer admits ::1 either. Public IPv6 stays allowed.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
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
    const targets = [
      '64:ff9b:1::a9fe:a9fe',
      '64:ff9b:1::a00:1',
      '64:ff9b:1::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '::1',
    ]
    const decisions = await probe(s, [...targets, '2606:4700::1111'])
    assert.deepEqual(decisions, {
      ...Object.fromEntries(targets.map((t) => [t, 'refused'])),
      '2606:4700::1111': 'allowed',
    })
    assert.match(
      decisionLines['64:ff9b:1::a00:1'] ?? '',
      /\(local-use NAT64\): reachable only through an allow entry naming that IP or a CIDR inside its range/,
    )
  } finally {
    await s.dispose()
  }
})

test('an entry inside the local-use NAT64 prefix reaches it; metadata stays refused even when named', async () => {
  const s = await rt.createSession({
    roots: [root],
    network: { enabled: true, allow: ['64:ff9b:1::/96', '64:ff9b::a9fe:a9fe'] },
  })
  try {
    assert.deepEqual(await probe(s, ['64:ff9b:1::a00:1', '64:ff9b::a9fe:a9fe']), {
      '64:ff9b:1::a00:1': 'allowed',
      '64:ff9b::a9fe:a9fe': 'refused',
    })
  } finally {
    await s.dispose()
  }
})

const decisionLines: Record<string, string> = {}

// Asks the session's proxy for its decision on each target (nothing is sent).
async function probe(
  s: Awaited<ReturnType<Runtime['createSession']>>,
  targets: string[],
): Promise<Record<string, string | undefined>> {
  const r = await s.runBlock(
    targets.map((t) => `print('TARGET ${t}')\nnetwork_probe('http://[${t}]/latest/meta-data/')`).join('\n'),
  )
  const out = r.stdout ?? ''
  const chunks = out.split('TARGET ').slice(1)
  for (const c of chunks) decisionLines[c.split('\n')[0] ?? ''] = c
  return Object.fromEntries(chunks.map((c) => [c.split('\n')[0], /decision: (\w+)/.exec(c)?.[1]]))
}
