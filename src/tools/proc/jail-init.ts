// The first program of every tool jail (shell, background shell, git). vis-launcher
// has applied Landlock, rlimits and no_new_privs; this adds the layers that live in
// a process, then runs the tool's command (argv after the script) with the same stdio
// and exits with its status:
// - with the network on, the loopback listener that relays to the host's egress proxy
//   (the jail's network namespace has no other way out; HTTP(S)_PROXY point at it);
// - the worker's seccomp filter, processes allowed (no new namespaces, no ptrace,
//   io_uring, bpf, mount, keyctl; socket families per the network policy), installed
//   on every thread and inherited by everything the command starts.
// A jail that joins its session's shared tool network namespace (VIS_JAIL_SHARED_NET=1)
// starts no relay (the namespace's holder serves the egress port) and may open inet
// sockets even with the network off: that namespace has only loopback, so the session's
// tool processes can serve and query each other and nothing else.
// An exit code cannot tell "killed by SIGKILL" from `exit 137`, and the layers above
// (bwrap, the cgroup shell) only pass codes on; so when the spawner hands over a status
// pipe (VIS_JAIL_STATUS_FD), the command's end is written there as one JSON line,
// {"exit": N} or {"signal": "SIGKILL"}.
import { type StdioOptions, spawn } from 'node:child_process'
import { openSync, writeSync } from 'node:fs'
import { constants } from 'node:os'
import { startEgressForwarderFromEnv } from '../../confinement/egress/forwarder.js'
import { installSeccomp } from '../../confinement/seccomp.js'

function fail(message: string): never {
  process.stderr.write(`vis jail-init: ${message}\n`)
  process.exit(125)
}

const [command, ...args] = process.argv.slice(2)
if (!command) fail('no command given')

// The command must not inherit the pipe (its daemons would hold it, and could write on
// it): its fd 3 is /dev/null instead.
function statusPipe(): number | undefined {
  const fd = Number(process.env.VIS_JAIL_STATUS_FD)
  delete process.env.VIS_JAIL_STATUS_FD
  return Number.isInteger(fd) && fd >= 3 ? fd : undefined
}
const status = statusPipe()
const sharedNet = process.env.VIS_JAIL_SHARED_NET === '1'
delete process.env.VIS_JAIL_SHARED_NET
if (sharedNet) {
  // The holder serves the relay; the port stays, for the commands' Python (toolsite.py).
  delete process.env.VIS_EGRESS_SOCKET
}
try {
  const forwarder = sharedNet ? undefined : await startEgressForwarderFromEnv()
  installSeccomp({ processes: true, network: sharedNet || forwarder !== undefined })
} catch (err) {
  fail((err as Error).message)
}
const stdio: StdioOptions =
  status === undefined
    ? 'inherit'
    : ['inherit', 'inherit', 'inherit', ...Array(status - 3).fill('ignore'), openSync('/dev/null', 'r')]
const child = spawn(command, args, { stdio })
// A stop signals every process of the tree itself; passing it on again would make a
// relay such as `script` cut its command's goodbye. This process outlives the command
// only to report its status, and the jail's kill ends it in any case.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => undefined)
child.on('error', (err) => {
  process.stderr.write(`vis jail-init: could not start ${command}: ${err.message}\n`)
  process.exit(127)
})
child.on('exit', (code, signal) => {
  if (status !== undefined) {
    try {
      writeSync(status, `${JSON.stringify(signal ? { signal } : { exit: code })}\n`)
    } catch {}
  }
  process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0))
})
