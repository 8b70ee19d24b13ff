// ATTACK (surface 1, egress path rules): an allow rule can narrow plain HTTP to paths
// (`{host, access: 'read-only', paths: ['/public/*']}`). The proxy refuses `/public/../admin` and
// `/public/%2e%2e/admin`, but `/public/..%2fadmin` passes the `/public/*` glob and is forwarded
// as it is. Servers that decode the path before resolving dot segments (nginx's URI
// normalisation, most "decodeURIComponent then path.normalize" handlers and static servers)
// serve /admin. The listener here resolves paths that way and records what it served. On the
// current code it serves /admin to the sandbox, a path the rule never allowed.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
let srv: Server
let port = 0
const served: string[] = []
const root = mkdtempSync(join(tmpdir(), 'vis-attack-pathrule-'))
before(async () => {
  const { home } = tempHome('attack-path-rule')
  srv = createServer((req, res) => {
    const path = posix.normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!))
    served.push(path)
    res.end(`served ${path}\n`)
  })
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', () => res()))
  port = (srv.address() as { port: number }).port
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  srv.close()
  rmSync(root, { recursive: true, force: true })
})

test('a path rule cannot be left through an encoded slash', async () => {
  const s = await rt.createSession({
    roots: [root],
    network: {
      enabled: true,
      allow: [{ host: `127.0.0.1:${port}`, access: 'read-only', paths: ['/public/*'] }],
    },
  })
  try {
    const r = await s.runBlock(
      `import urllib.request
for p in ['/public/ok', '/public/../admin', '/public/%2e%2e/admin', '/public/..%2fadmin']:
    try:
        print(p, urllib.request.urlopen('http://127.0.0.1:${port}' + p, timeout=10).read().decode().strip())
    except Exception as e:
        print(p, 'refused', str(e)[:80])`,
      { timeoutMs: 30_000 },
    )
    assert.ok(served.includes('/public/ok'), `setup: the allowed path should be served: ${r.stdout}`)
    assert.deepEqual(
      served.filter((p) => !p.startsWith('/public/')),
      [],
      `the destination served paths outside the rule's /public/*: ${r.stdout}`,
    )
  } finally {
    await s.dispose()
  }
})
