// The two Python peers of bench/peers.js, both running bench/peer_worker.py on the staged python3:
// python-shell (the npm package, Node ↔ python3 over stdin/stdout pipes, JSON lines) and a plain
// worker over a socketpair (fd 3 of the child). Each answers the same requests vis is timed on.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { PythonShell } from 'python-shell'

export const PEER_SCRIPT = fileURLToPath(new URL('../peer_worker.py', import.meta.url))
// Isolated (no PYTHON* variables, no user site): what a host starting python3 for a tool would run.
const PYTHON_OPTIONS = ['-I']

// Splits a byte stream into lines and hands each finished one to `onLine`.
function lineReader(onLine) {
  let buf = ''
  return (chunk) => {
    buf += chunk
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      onLine(line)
    }
  }
}

// One request at a time: the reply to `request` is the next message that is not a host call;
// host calls ({"call": ...}) are answered at once with {"value": 1}, as vis's bench binds ping.
function requester(send) {
  let waiter
  return {
    onMessage(msg) {
      if (msg.call !== undefined) {
        send({ value: 1 })
        return
      }
      const w = waiter
      waiter = undefined
      w?.(msg)
    },
    request(msg) {
      return new Promise((resolve) => {
        waiter = resolve
        send(msg)
      })
    },
  }
}

export function startShellPeer(python) {
  const shell = new PythonShell(PEER_SCRIPT, {
    mode: 'json',
    pythonPath: python,
    pythonOptions: PYTHON_OPTIONS,
    args: ['stdio'],
  })
  const r = requester((m) => shell.send(m))
  shell.on('message', (m) => r.onMessage(m))
  shell.on('stderr', (line) => process.stderr.write(`python-shell peer: ${line}\n`))
  return { name: 'python-shell', pid: shell.childProcess.pid, request: r.request, close: () => shell.kill() }
}

export function startSocketPeer(python) {
  const child = spawn(python, [...PYTHON_OPTIONS, PEER_SCRIPT, 'socket'], {
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
  })
  const sock = child.stdio[3]
  sock.setEncoding('utf8')
  const r = requester((m) => sock.write(`${JSON.stringify(m)}\n`))
  sock.on(
    'data',
    lineReader((line) => r.onMessage(JSON.parse(line))),
  )
  return {
    name: 'python worker',
    pid: child.pid,
    child,
    request: r.request,
    close: () => child.kill('SIGKILL'),
  }
}

// Spawn to the first reply of a fresh plain worker: what a bare python3 costs to start.
export async function spawnToFirstReply(python) {
  const t0 = performance.now()
  const peer = startSocketPeer(python)
  const reply = await peer.request({ op: 'exec', code: 'x = 1' })
  const ms = performance.now() - t0
  if (!reply.ok) throw new Error(`the plain worker did not run x = 1: ${JSON.stringify(reply)}`)
  const exited = new Promise((r) => peer.child.once('exit', r))
  peer.close()
  await exited
  return ms
}

// The same three measurements vis gets per round: exec `x = 1`, host calls timed inside Python,
// and a 64 KiB string there and back.
export async function measureRound(peer, into, batch, bigBatch, big) {
  for (let i = 0; i < batch; i++) {
    const t0 = performance.now()
    await peer.request({ op: 'exec', code: 'x = 1' })
    into.exec.push((performance.now() - t0) * 1000)
  }
  const { ns } = await peer.request({ op: 'hostcalls', n: batch })
  into.hostcall.push(...ns.map((x) => x / 1000))
  for (let i = 0; i < bigBatch; i++) {
    const t0 = performance.now()
    const { value } = await peer.request({ op: 'echo', value: big })
    into.payload64k.push((performance.now() - t0) * 1000)
    if (value.length !== big.length) throw new Error(`${peer.name}: the 64 KiB string came back cut`)
  }
}
