// Runs as the worker will, inside spawnConfined: install seccomp, verify every
// thread, then try what guest native code could do from Node. Prints one JSON line.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { Worker } from 'node:worker_threads'
import { installSeccomp } from '../../src/confinement/seccomp.js'

const outcome = (fn: () => unknown): string => {
  try {
    fn()
    return 'allowed'
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'error'
  }
}
const report = installSeccomp({ processes: false, network: false })
const exec = outcome(() => execFileSync('/usr/bin/node', ['-e', '0']))
const passwd = outcome(() => readFileSync('/etc/passwd'))
const tcp = await new Promise<string>((resolve) => {
  const s = connect(80, '127.0.0.1')
  s.on('connect', () => resolve('allowed'))
  s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'))
})
const thread = await new Promise<string>((resolve) => {
  const w = new Worker('require("worker_threads").parentPort.postMessage(21 * 2)', { eval: true })
  w.on('message', (m) => resolve(String(m)))
  w.on('error', (e) => resolve(`error ${e.message}`))
})
const status = readFileSync('/proc/self/status', 'utf8')
process.stdout.write(
  `${JSON.stringify({ report, exec, passwd, tcp, thread, noNewPrivs: /NoNewPrivs:\s+1/.test(status), capEff: /CapEff:\s+(\w+)/.exec(status)?.[1] })}\n`,
)
