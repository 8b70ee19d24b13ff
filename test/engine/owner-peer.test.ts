// The owner socket (engine/ownership.ts) answers the vis processes of this user on the host and
// refuses a process in another user namespace (a jail's: bubblewrap always unshares it), should
// one ever reach the socket past the homes' masks. The same client, run on the host and then in
// a user namespace of its own (unshare --user, as bubblewrap makes), sends one close line.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createEngine } from '../../src/engine/index.js'

const python = process.env.VIS_PYTHON_VERSION

// One close request over the socket with the system's python3; its reply line. (Not spawnSync:
// the engine answering is in this process.)
async function closeOver(
  socketPath: string,
  sessionId: string,
  prefix: string[],
): Promise<Record<string, unknown>> {
  const client = `import json, socket, sys
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[1])
c.sendall((json.dumps({"op": "close", "sessionId": sys.argv[2]}) + "\\n").encode())
buf = b""
while not buf.endswith(b"\\n"):
    d = c.recv(4096)
    if not d:
        break
    buf += d
print(buf.decode().strip())`
  const argv = [...prefix, 'python3', '-c', client, socketPath, sessionId]
  const r = await promisify(execFile)(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 30_000 })
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!)
}

test('the owner socket refuses a peer in another user namespace and answers one on the host', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-peer-home-'))
  const e = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const a = await e.createSession({ roots: [mkdtempSync(join(tmpdir(), 'vis-peer-root-'))] })
    const b = await e.createSession({ roots: [mkdtempSync(join(tmpdir(), 'vis-peer-root-'))] })
    await e.runBlock(a.id, { code: 'x = 1' })
    await e.runBlock(b.id, { code: 'x = 1' })
    const sock = readdirSync(join(home, 'run')).find((n) => n.endsWith('.sock'))
    assert.ok(sock, 'the engine listens on its owner socket')
    const path = join(home, 'run', sock)

    const jailed = await closeOver(path, a.id, ['unshare', '--user', '--map-current-user'])
    assert.equal(
      (jailed.error as { code?: string } | undefined)?.code,
      'session.owner-peer-refused',
      JSON.stringify(jailed),
    )
    assert.equal(e.sessionView(a.id).state, 'open', 'a process in another user namespace closed a session')

    const host = await closeOver(path, b.id, [])
    assert.ok('ok' in host, JSON.stringify(host))
    assert.equal(e.sessionView(b.id).state, 'closed')
  } finally {
    await e.close()
  }
})
