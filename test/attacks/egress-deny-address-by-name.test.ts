// ATTACK (surface 4, egress: "DNS answers", every spelling of an address): `network.deny` takes
// IP literals and CIDRs ("a specific deny beats a specific allow"), and an operator writes
// `deny: ['203.0.113.7']` to keep a session off that machine. But the evaluator matches an
// IP/CIDR entry only against a connection made TO AN ADDRESS (targetMatches: a name never matches
// an address entry), which is right for ALLOW entries (a name off the list is never looked up)
// and wrong for DENY entries: any name whose DNS answer is the denied address (a wildcard DNS
// service such as `203.0.113.7.nip.io`, or the attacker's own zone) is judged by the name, and
// the name is allowed (`allow: []`, `'*'`, or an allowed domain that a tenant controls). Worse,
// once the guest has looked such a name up, connecting to the BARE denied address is allowed too
// (check.ts judges a bare address "by a name that resolved to it for this sandbox").
// Here (no DNS leaves the machine): the suite's resolver seam (egress/lab.ts) answers
// `denied.lab.test` with 127.0.0.2 and `other.lab.test` with 127.0.0.3, both declared public for
// the test; listeners on 127.0.0.2 and 127.0.0.3; the policy is every public destination except
// `127.0.0.2`. The bare denied address is refused (works today); the other name is reached (works);
// the denied address by its name, and then by its bare address, reach the listener on the current
// code (the bare address after a raw socket.getaddrinfo of the name, through net.py's tunnel).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { installEgressLab } from '../../src/confinement/egress/lab.js'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'
import { fetchCode as fetch, listen } from './fixtures/egress-listeners.js'

test('a denied IP address stays denied when reached through a name that resolves to it', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-denyname-'))
  const seen: string[] = []
  const servers: Server[] = []
  let rt: Runtime | undefined
  let undo: (() => void) | undefined
  try {
    const denied = await listen('127.0.0.2', seen)
    servers.push(denied)
    const other = await listen('127.0.0.3', seen)
    servers.push(other)
    const dPort = (denied.address() as { port: number }).port
    const oPort = (other.address() as { port: number }).port
    undo = installEgressLab({
      names: { 'denied.lab.test': ['127.0.0.2'], 'other.lab.test': ['127.0.0.3'] },
      publicRanges: ['127.0.0.2/32', '127.0.0.3/32'],
    })
    const { home } = tempHome('attack-deny-by-name')
    rt = await createRuntime({ home, python, pool: { size: 0 } })
    const s = await rt.createSession({
      roots: [root],
      network: { enabled: true, allow: [], deny: ['127.0.0.2'] },
    })
    try {
      const r = await s.runBlock(
        [
          fetch(`http://127.0.0.2:${dPort}/bare-first`, 'BARE'),
          fetch(`http://other.lab.test:${oPort}/other`, 'OTHER'),
          fetch(`http://denied.lab.test:${dPort}/by-name`, 'NAME'),
          // The guest's own lookup of the name, then a raw connection to the bare denied address.
          `import socket\ntry:\n    socket.getaddrinfo('denied.lab.test', ${dPort})\n    c = socket.create_connection(('127.0.0.2', ${dPort}), timeout=20)\n    c.sendall(b'GET /bare-after-lookup HTTP/1.0\\r\\n\\r\\n')\n    print('RAW', c.recv(200).split(b'\\r\\n')[0].decode())\nexcept Exception as e:\n    print('RAW refused', type(e).__name__, str(e)[:200])`,
        ].join('\n'),
        { timeoutMs: 60_000 },
      )
      const out = r.stdout ?? ''
      // Both directions: the bare denied address is refused, an allowed name is reached.
      assert.match(out, /^BARE refused .*deny entry '127\.0\.0\.2'/m, out)
      assert.match(out, /^OTHER reached$/m, out)
      assert.ok(
        !seen.some((u) => u.startsWith('127.0.0.2')),
        `the denied address was reached (requests: ${JSON.stringify(seen)}):\n${out}`,
      )
      assert.match(out, /^NAME refused .*deny entry '127\.0\.0\.2'/m, out)
      assert.match(out, /^RAW refused /m, out)
    } finally {
      await s.dispose()
    }
  } finally {
    undo?.()
    await rt?.close()
    for (const srv of servers) await new Promise<void>((res) => srv.close(() => res()))
    rmSync(root, { recursive: true, force: true })
  }
})
