// Same-run peers for the cold start and idle memory rows of bench/peers.js, so a target that
// cannot be met is shown so by something doing the same work, not by our own floor:
// - a bare `node` spawned to its first reply over a socketpair (dist/worker/floor-peer.js: no
//   validation, no Python): what the Node helper every session has costs to start and to keep;
// - vis itself without the OS jail (createRuntime({ confine: false })): Node + the embedded
//   interpreter + our setup, no bubblewrap, no Landlock, no seccomp.
// Between them and the confined session, the table says how much of the gap is Node's own start,
// how much the interpreter and our setup, and how much the jail.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const rssMb = (pid) =>
  Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
const settle = (ms) => new Promise((r) => setTimeout(r, ms))

// Spawn to first reply of a bare Node child; with `idleMs`, also its RSS once it has idled that
// long after the reply (as vis's idle session is measured 200 ms after its block).
export async function nodeSpawnToFirstReply(floorPeer, idleMs) {
  const t0 = performance.now()
  const child = spawn(process.execPath, [floorPeer], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
  })
  const sock = child.stdio[3]
  const reply = await new Promise((resolve, reject) => {
    let buf = ''
    sock.setEncoding('utf8')
    sock.on('data', (c) => {
      buf += c
      if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))))
    })
    child.once('exit', (code) => reject(new Error(`the bare node peer exited with ${code}`)))
    sock.write(`${JSON.stringify({ id: 1, op: 'ping', value: null })}\n`)
  })
  const ms = performance.now() - t0
  if (reply.id !== 1) throw new Error(`the bare node peer answered ${JSON.stringify(reply)}`)
  let rss
  if (idleMs !== undefined) {
    await settle(idleMs)
    rss = rssMb(child.pid)
  }
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGKILL')
  await exited
  return { ms, rss }
}

// vis without the OS jail: a cold session per `cold()`, and once an idle session's tree RSS.
export async function startUnconfined({ createRuntime, treeRssMb, python }) {
  const home = mkdtempSync(join(tmpdir(), 'vis-peers-unconfined-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-peers-unconfined-root-'))
  const rt = await createRuntime({ home, python, pool: { size: 0 }, confine: false })
  return {
    async cold() {
      const t0 = performance.now()
      const s = await rt.createSession({ roots: [root] })
      const ms = performance.now() - t0
      await s.dispose()
      return ms
    },
    async idleRss() {
      const s = await rt.createSession({ roots: [root] })
      await s.runBlock('n = 1')
      await settle(200)
      const mb = treeRssMb(s.pid)
      await s.dispose()
      return mb
    },
    async close() {
      await rt.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(root, { recursive: true, force: true })
    },
  }
}
