// Egress cost on a lab upstream (test/confinement/lab): a network namespace with a veth
// pair and a TEST-NET-2 address, named lab.test through the lab's resolver map. The same
// client code (bench/egress_client.py) measures connect latency (by name: lookup + connect;
// by address: connect alone) and a 1 MiB HTTP download
//   direct: the host's python (the distribution's) dialling the lab's address;
//   egress: a block in a jailed session allowed ['lab.test'], going through the worker's
//           relay, the host proxy's policy check and its dial (CONNECT tunnel).
//   sudo node --import tsx bench/egress.js [--n 200] [--downloads 20]
// Needs root (the lab). Prints p50/p99 in ms and egress/direct ratios. Reports, never asserts.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRuntime } from '../src/sessions/create-runtime.js'
import { pythonHome } from '../src/worker/python-home.js'
import { startLab } from '../test/confinement/lab/lab.js'

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
const N = arg('--n', 200)
const DOWNLOADS = arg('--downloads', 20)
process.env.VIS_HOME ??= mkdtempSync(join(tmpdir(), 'vis-bench-'))
const client = fileURLToPath(new URL('./egress_client.py', import.meta.url))

const lab = await startLab()
const rt = await createRuntime({ pool: { size: 0 } })
try {
  const home = await pythonHome(undefined)
  const direct = JSON.parse(
    execFileSync(
      join(home.root, 'bin', `python${home.minor}`),
      [client, lab.address, String(lab.ports.echo), String(lab.ports.http), String(N), String(DOWNLOADS)],
      { encoding: 'utf8' },
    ),
  )
  const root = mkdtempSync(join(tmpdir(), 'vis-bench-root-'))
  const s = await rt.createSession({ roots: [root], network: { enabled: true, allow: ['lab.test'] } })
  const code = `${readFileSync(client, 'utf8').split('if __name__')[0]}\nprint(json.dumps(measure("lab.test", ${lab.ports.echo}, ${lab.ports.http}, ${N}, ${DOWNLOADS})))`
  const r = await s.runBlock(code)
  if (r.error) throw new Error(JSON.stringify(r.error))
  const egress = JSON.parse((r.stdout ?? '').trim())
  await s.dispose()
  const row = (name, key) => {
    const d = direct[key]
    const e = egress[key]
    const f = (x) => x.toFixed(2).padStart(8)
    console.log(
      `${name.padEnd(22)} ${f(d.p50)} ${f(d.p99)} ${f(e.p50)} ${f(e.p99)} ${(e.p50 / d.p50).toFixed(2).padStart(8)}x`,
    )
  }
  console.log(`lab ${lab.address} (lab.test), n=${N} connects, ${DOWNLOADS} downloads; ms`)
  console.log(
    `${'what'.padEnd(22)} ${'direct50'.padStart(8)} ${'direct99'.padStart(8)} ${'egress50'.padStart(8)} ${'egress99'.padStart(8)} ${'ratio50'.padStart(9)}`,
  )
  row('connect by name', 'connect_ms')
  row('connect by address', 'connect_address_ms')
  row('1 MiB (tunnel)', 'download_1mib_ms')
  row('1 MiB (urllib, proxy)', 'download_urllib_ms')
} finally {
  await rt.close()
  await lab.close()
}
