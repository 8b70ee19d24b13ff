// A session's network tightening (Session.setNetwork) is part of its stored policy: a later host
// process reopening the session keeps it, in both directions. What the narrowed list still allows
// keeps working after the restart; what it dropped stays refused; a widening stays refused
// (worker.network-loosen) and changes nothing stored. Real workers, real loopback listeners,
// SQLite and PostgreSQL.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { isVisError } from '../../src/util/errors.js'
import { freshDatabaseUrl } from '../helpers/postgres.js'

const python = process.env.VIS_PYTHON_VERSION

async function listener(seen: string[]): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    seen.push(String(req.url))
    res.end('answer\n')
  })
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()))
  after(() => new Promise<void>((res) => server.close(() => res())))
  return { port: (server.address() as { port: number }).port, server }
}

const fetchCode = (port: number, path: string) =>
  `import urllib.request\ntry:\n    print(urllib.request.urlopen('http://127.0.0.1:${port}${path}', timeout=20).read().decode().strip())\nexcept Exception as e:\n    print('refused', type(e).__name__)`

const networkOf = (engine: Engine, id: string) =>
  (engine.sessionView(id).policy as { network: { enabled: boolean; allow: string[]; deny: string[] } })
    .network

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`a narrowed allow list is stored and kept by a reopened session (${backend})`, async () => {
    const home = mkdtempSync(join(tmpdir(), 'vis-engine-tighten-'))
    const root = mkdtempSync(join(tmpdir(), 'vis-engine-tighten-root-'))
    process.env.VIS_HOME = home
    after(() => {
      rmSync(home, { recursive: true, force: true })
      rmSync(root, { recursive: true, force: true })
    })
    const databaseUrl = backend === 'postgres' ? freshDatabaseUrl() : ''
    const seen: string[] = []
    const kept = await listener(seen)
    const dropped = await listener(seen)
    const keep = `127.0.0.1:${kept.port}`
    const drop = `127.0.0.1:${dropped.port}`

    const e1 = await createEngine({ home, python, pool: { size: 0 }, databaseUrl })
    let id: string
    try {
      const s = await e1.createSession({
        roots: [root],
        network: { enabled: true, allow: [keep, drop], deny: ['10.0.0.0/8'] },
      })
      id = s.id
      const ack = await (await e1.runtimeSession(id)).setNetwork({ enabled: true, allow: [keep] })
      assert.deepEqual(ack.allow, [keep])
      // Stored when setNetwork returns: the session's view shows the narrowed network, the deny
      // list as it was.
      assert.deepEqual(networkOf(e1, id), { enabled: true, allow: [keep], deny: ['10.0.0.0/8'] })
      assert.equal(
        (await e1.runBlock(id, { code: fetchCode(kept.port, '/kept-1') })).block.stdout,
        'answer\n',
      )
    } finally {
      await e1.close()
    }

    const e2 = await createEngine({ home, python, pool: { size: 0 }, databaseUrl })
    try {
      // Allowed: what the narrowed list keeps still works in the reopened session (its roots'
      // pins were kept beside the new network: no policy.root-changed).
      const ok = await e2.runBlock(id, { code: fetchCode(kept.port, '/kept-2') })
      assert.equal(ok.block.stdout, 'answer\n', JSON.stringify(ok.block.error))
      // Denied: what the tightening dropped stays dropped after the restart.
      const no = await e2.runBlock(id, { code: fetchCode(dropped.port, '/dropped') })
      assert.match(no.block.stdout ?? '', /^refused /)
      assert.deepEqual(seen, ['/kept-1', '/kept-2'])
      // A widening stays refused, and nothing of it is stored.
      await assert.rejects(
        (await e2.runtimeSession(id)).setNetwork({ enabled: true, allow: [keep, drop] }),
        (err: unknown) => isVisError(err, 'worker.network-loosen') && err.message.includes('new session'),
      )
      assert.deepEqual(networkOf(e2, id), { enabled: true, allow: [keep], deny: ['10.0.0.0/8'] })
      // A further tightening (off) is stored too.
      await (await e2.runtimeSession(id)).setNetwork({ enabled: false })
      assert.deepEqual(networkOf(e2, id), { enabled: false, allow: [], deny: ['10.0.0.0/8'] })
    } finally {
      await e2.close()
    }
  })
}
