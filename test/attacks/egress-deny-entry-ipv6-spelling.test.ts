// ATTACK (surface 3, egress: "deny IP/CIDR judged on every dialled answer in every spelling"):
// `AddressPattern.denies` widens a DENY entry so it holds for every spelling of the dialled
// address that reaches the machine it names: the dialled address may be IPv4-mapped,
// IPv4-translated or IPv4-compatible IPv6 (address.ts calls these SAME_DESTINATION: "the IPv4
// address is the destination itself"), or carried by NAT64/6to4/Teredo. But it looks only at the
// DIALLED side. The ENTRY is compared by its own 16 bytes: an IPv4 entry (as16: ::ffff:a.b.c.d)
// or an IPv4-mapped one agree with a dialled IPv4 address, while the other two spellings of the
// same destination, the IPv4-translated `::ffff:0:127.0.0.2` and the IPv4-compatible
// `::127.0.0.2`, are both accepted by the policy schema (parseCidr) and then deny NOTHING of the
// machine they stand for: a connection to 127.0.0.2 is judged against the bytes
// ::ffff:7f00:2, which neither entry's bytes cover, and passes.
// Here (no DNS leaves the machine): a listener on 127.0.0.2 (declared public for the test by the
// suite's egress lab, as egress-deny-address-by-name.test.ts does), a session allowing every
// public destination and denying the address once in each of the two spellings (one session
// each). Both directions: with `deny: ['127.0.0.2']` the connection is refused (works today), and
// an allowed listener on 127.0.0.3 is still reached in every session.
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

test('a deny entry spelled as IPv4-translated or IPv4-compatible IPv6 denies the IPv4 address it stands for', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-denyspell-'))
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
    undo = installEgressLab({ names: {}, publicRanges: ['127.0.0.2/32', '127.0.0.3/32'] })
    const { home } = tempHome('attack-deny-spelling')
    rt = await createRuntime({ home, python, pool: { size: 0 } })
    const landed: string[] = []
    for (const entry of ['127.0.0.2', '::ffff:0:127.0.0.2', '::127.0.0.2']) {
      const s = await rt.createSession({
        roots: [root],
        network: { enabled: true, allow: [], deny: [entry] },
      })
      try {
        const before = seen.length
        const r = await s.runBlock(
          [
            fetch(`http://127.0.0.2:${dPort}/deny-${entry}`, 'DENIED'),
            fetch(`http://127.0.0.3:${oPort}/other`, 'OTHER'),
          ].join('\n'),
          { timeoutMs: 60_000 },
        )
        const out = r.stdout ?? ''
        // What is allowed must still work.
        assert.match(out, /^OTHER reached$/m, `${entry}: ${out}`)
        const reached = seen.slice(before).filter((u) => u.startsWith('127.0.0.2'))
        if (reached.length > 0)
          landed.push(`deny ${JSON.stringify(entry)}: a block reached 127.0.0.2 (${out.trim()})`)
        else assert.match(out, /^DENIED refused /m, `${entry}: ${out}`)
      } finally {
        await s.dispose()
      }
    }
    assert.deepEqual(landed, [], landed.join('\n'))
  } finally {
    undo?.()
    await rt?.close()
    for (const srv of servers) await new Promise<void>((res) => srv.close(() => res()))
    rmSync(root, { recursive: true, force: true })
  }
})
