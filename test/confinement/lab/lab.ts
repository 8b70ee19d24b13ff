// A lab upstream the egress policy treats as public, for tests and bench/egress.js:
// a network namespace this process creates, joined to the host by a veth pair carrying a
// /30 from TEST-NET-2 (198.51.100.0/24), serving HTTP, HTTPS (a CA made here with the
// openssl CLI) and a TCP echo. Names reach it only through the resolver map the lab
// installs in the egress proxy (installEgressLab); TEST-NET-2 counts as public only while
// the lab is installed. Needs root (CI runs as root).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installEgressLab } from '../../../src/confinement/egress/lab.js'
import type { LabAnswer } from '../../../src/confinement/egress/resolve.js'

export type Lab = {
  ns: string
  hostVeth: string
  address: string // the upstream, inside the namespace
  hostAddress: string // the host's end of the veth
  ports: { http: number; https: number; echo: number }
  caFile: string
  dir: string
  // Name -> addresses the egress proxy's resolver answers while the lab is installed.
  names: Record<string, LabAnswer>
  close(): Promise<void>
}

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' })

function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=vis lab CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  )
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'lab.key',
    '-out',
    'lab.csr',
    '-subj',
    '/CN=lab.test',
  )
  writeFileSync(
    join(dir, 'ext.cnf'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:lab.test,DNS:*.lab.test\n',
  )
  ssl(
    'x509',
    '-req',
    '-in',
    'lab.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'lab.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  )
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'lab.pem'), key: join(dir, 'lab.key') }
}

// A /30 of TEST-NET-2 no other interface of this host uses (parallel labs may exist).
function freeSubnet(): number {
  const used = ip('-4', '-o', 'addr', 'show')
  for (let tries = 0; tries < 64; tries++) {
    const base = 4 * (1 + Math.floor(Math.random() * 62))
    if (!used.includes(`198.51.100.${base + 1}/30`)) return base
  }
  throw new Error('no free /30 in 198.51.100.0/24')
}

export async function startLab(
  opts: { echoPort?: number; files?: string; caDir?: string } = {},
): Promise<Lab> {
  if (process.getuid?.() !== 0) throw new Error('the egress lab needs root (ip netns, veth): CI runs as root')
  const tag = randomBytes(3).toString('hex')
  const ns = `vislab-${tag}`
  const hostVeth = `vlh${tag}`
  const labVeth = `vll${tag}`
  const dir = mkdtempSync(join(tmpdir(), 'vis-lab-'))
  const base = freeSubnet()
  const hostAddress = `198.51.100.${base + 1}`
  const address = `198.51.100.${base + 2}`
  let server: ChildProcess | undefined
  const cleanup = () => {
    server?.kill('SIGKILL')
    try {
      ip('link', 'del', hostVeth)
    } catch {}
    try {
      ip('netns', 'del', ns)
    } catch {}
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    ip('netns', 'add', ns)
    ip('link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', labVeth)
    ip('link', 'set', labVeth, 'netns', ns)
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostVeth)
    ip('link', 'set', hostVeth, 'up')
    ip('-n', ns, 'addr', 'add', `${address}/30`, 'dev', labVeth)
    ip('-n', ns, 'link', 'set', labVeth, 'up')
    ip('-n', ns, 'link', 'set', 'lo', 'up')
    // Nothing is sent before the route to the lab is known to be the veth.
    const route = ip('route', 'get', address)
    if (!new RegExp(`\\bdev ${hostVeth}\\b`).test(route))
      throw new Error(`the route to ${address} is not the lab's veth: ${route}`)
    const certs = makeCertificates(opts.caDir ?? dir)
    const ports = { http: 8080, https: 8443, echo: opts.echoPort ?? 7007 }
    const script = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs')
    const cfg = {
      address,
      httpPort: ports.http,
      httpsPort: ports.https,
      echoPort: ports.echo,
      cert: certs.cert,
      key: certs.key,
      files: opts.files,
    }
    server = spawn('ip', ['netns', 'exec', ns, process.execPath, script, JSON.stringify(cfg)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    await new Promise<void>((resolve, reject) => {
      let err = ''
      server?.stderr?.on('data', (d) => {
        err += d
      })
      server?.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) resolve()
      })
      server?.once('exit', (code) => reject(new Error(`the lab server exited (${code}): ${err}`)))
    })
    let flips = 0
    const names: Record<string, LabAnswer> = {
      'lab.test': [address],
      'a.lab.test': [address],
      'b.lab.test': [address],
      'elsewhere.test': [address],
      'inside.test': ['127.0.0.1'],
      'private.test': ['10.0.0.1'],
      'mixed.test': [address, '127.0.0.1'],
      'meta.test': ['169.254.169.254'],
      // Rebinding: public, then loopback, then public...
      'flip.test': () => (flips++ % 2 === 0 ? [address] : ['127.0.0.1']),
    }
    const uninstall = installEgressLab({ names, publicRanges: [`${address}/32`] })
    return {
      ns,
      hostVeth,
      address,
      hostAddress,
      ports,
      caFile: certs.ca,
      dir,
      names,
      async close() {
        uninstall()
        cleanup()
      },
    }
  } catch (err) {
    cleanup()
    throw err
  }
}
