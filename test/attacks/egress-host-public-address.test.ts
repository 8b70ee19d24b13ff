// ATTACK (surface 1, egress): the address floor refuses loopback, RFC 1918, link-local... but
// the HOST'S OWN interface addresses are judged by their class only. On a machine whose public
// address sits on an interface (most VPS/bare-metal hosts), a session with the network on and
// `allow: []` ("every public destination") reaches every service the host binds to 0.0.0.0 by
// dialling the host's public address: the proxy connects from the host to itself. SECURITY.md:
// in scope is "reaching the host's network, loopback ..."; the guard (guard.ts) already knows
// the interface addresses but protects only vis's own ports there, so a database, an admin
// panel or a dev server on the host (firewalled from the internet, not from itself) is open to
// the sandbox. 127.0.0.1 on the same port is refused, as it should be.
// Reproduced in a network namespace this test makes (`unshare -n`, root or `-r`): lo carries
// 127.0.0.1 and a public address (8.8.4.4/32, never routed anywhere: the namespace has no other
// interface); a host service listens on 0.0.0.0. On the current code the block reads the
// service's reply through 8.8.4.4.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const PUBLIC = '8.8.4.4'

async function inNamespace(): Promise<void> {
  const { createRuntime } = await import('../../src/sessions/create-runtime.js')
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-pubaddr-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-pubaddr-root-'))
  process.env.VIS_HOME = home
  const hits: string[] = []
  const srv = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`)
    res.end('HOST-SERVICE-SECRET\n')
  })
  await new Promise<void>((res) => srv.listen(0, '0.0.0.0', () => res()))
  const port = (srv.address() as { port: number }).port
  const rt = await createRuntime({ home, python: process.env.VIS_PYTHON_VERSION, pool: { size: 0 } })
  try {
    const s = await rt.createSession({ roots: [root], network: { enabled: true, allow: [] } })
    const r = await s.runBlock(
      `import urllib.request
for h in ['${PUBLIC}', '127.0.0.1']:
    try:
        print(h, urllib.request.urlopen(f'http://{h}:${port}/x', timeout=10).read().decode().strip())
    except Exception as e:
        print(h, 'refused', str(e)[:120])`,
      { timeoutMs: 30_000 },
    )
    await s.dispose()
    const refusedHits = [...hits]
    // The other direction: an entry naming that very address opens it.
    const named = await rt.createSession({ roots: [root], network: { enabled: true, allow: [PUBLIC] } })
    const n = await named.runBlock(
      `import urllib.request\nprint(urllib.request.urlopen('http://${PUBLIC}:${port}/named', timeout=10).read().decode().strip())`,
      { timeoutMs: 30_000 },
    )
    await named.dispose()
    process.stdout.write(
      `${JSON.stringify({ stdout: r.stdout, error: r.error ?? null, hits: refusedHits, named: n.stdout ?? JSON.stringify(n.error) })}\n`,
    )
  } finally {
    await rt.close()
    srv.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
}

if (process.env.VIS_ATTACK_PUBADDR_CHILD === '1') {
  await inNamespace()
} else {
  test("the host's own public address does not reach the host's services (allow: [])", () => {
    const self = fileURLToPath(import.meta.url)
    const script = `ip link set lo up && ip addr add ${PUBLIC}/32 dev lo && exec "${process.execPath}" --import tsx "${self}"`
    const run = (flags: string[]) =>
      spawnSync('unshare', [...flags, 'sh', '-c', script], {
        env: { ...process.env, VIS_ATTACK_PUBADDR_CHILD: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      })
    let p = run(['-n'])
    if (p.status !== 0 && /Operation not permitted/.test(p.stderr)) p = run(['-rn'])
    assert.equal(p.status, 0, `setup: ${p.stderr}`)
    const line = p.stdout.trim().split('\n').pop() ?? '{}'
    const out = JSON.parse(line) as { stdout?: string; hits: string[]; named?: string }
    assert.match(out.stdout ?? '', /127\.0\.0\.1 refused/, `setup: loopback should be refused: ${line}`)
    assert.deepEqual(
      out.hits,
      [],
      `the sandbox reached a host service through the host's own address ${PUBLIC}: ${out.stdout}`,
    )
    assert.equal(out.named, 'HOST-SERVICE-SECRET\n', 'an allow entry naming the address opens it')
  })
}
