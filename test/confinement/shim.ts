// Stands in for the worker on network cases: starts the egress forwarder in a
// node process inside the sandbox, then runs the case's Python (which installs
// seccomp itself in prelude.py) and relays its exit status.
import { spawn } from 'node:child_process'
import { startEgressForwarderFromEnv } from '../../src/confinement/egress/forwarder.js'

const [python, ...args] = process.argv.slice(2)
const forwarder = await startEgressForwarderFromEnv()
const child = spawn(python as string, args, { stdio: 'inherit' })
child.on('exit', async (code, signal) => {
  await forwarder?.close()
  if (signal) process.kill(process.pid, signal)
  process.exit(code ?? 1)
})
