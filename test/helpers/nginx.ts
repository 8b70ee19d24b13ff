import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// A throwaway nginx (Debian's package): its own nginx.conf, pid, logs and temp paths in a
// temporary directory, so it runs beside anything else on the machine (runtime-notes §10).
export const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p))

export function requireNginx(): string {
  if (!NGINX) throw new Error('nginx is not installed: apt-get install -y nginx (.ci/run does it)')
  return NGINX
}

// A free loopback port (the kernel picks it; closed again before nginx binds it).
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

// The minimal main file around the generated http-context text.
export function nginxMain(dir: string, include: string): string {
  return `worker_processes 1;
daemon on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
    access_log ${dir}/access.log;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${include};
}
`
}

// `nginx -t` on the generated text: its exit status and what it said.
export function nginxCheck(generated: string): { ok: boolean; output: string } {
  const bin = requireNginx()
  const dir = mkdtempSync(join(tmpdir(), 'vis-nginx-check-'))
  try {
    writeFileSync(join(dir, 'vis.conf'), generated)
    writeFileSync(join(dir, 'nginx.conf'), nginxMain(dir, join(dir, 'vis.conf')))
    const r = spawnSync(bin, ['-t', '-c', join(dir, 'nginx.conf')], { encoding: 'utf8' })
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export type Nginx = { dir: string; pid: number; errorLog(): string; stop(): Promise<void> }

// Starts nginx on the generated text; stop() ends it (fast shutdown) and removes the directory.
export async function startNginx(generated: string): Promise<Nginx> {
  const bin = requireNginx()
  const dir = mkdtempSync(join(tmpdir(), 'vis-nginx-'))
  // As root, nginx's workers run as nobody: they must reach the temp paths inside.
  chmodSync(dir, 0o755)
  writeFileSync(join(dir, 'vis.conf'), generated)
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxMain(dir, join(dir, 'vis.conf')))
  const r = spawnSync(bin, ['-c', conf], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`nginx did not start: ${r.stderr}`)
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8')
    } catch {
      return ''
    }
  }
  // The daemonised master writes its pid file just after the starting process returned.
  const pidFile = join(dir, 'nginx.pid')
  for (let i = 0; i < 400 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25))
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  const alive = () => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  return {
    dir,
    pid,
    errorLog,
    async stop() {
      // SIGTERM to the master: fast shutdown of it and its worker; polled until it is gone.
      if (alive()) process.kill(pid, 'SIGTERM')
      for (let i = 0; i < 200 && alive(); i++) await new Promise((r) => setTimeout(r, 25))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
