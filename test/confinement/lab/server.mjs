// The lab upstream, run inside the lab's network namespace (`ip netns exec`): plain
// HTTP, HTTPS with the lab CA's certificate, a raw TCP echo, and static files (a bare git
// repository served the "dumb" way, a package index). Prints "ready" once every listener is up.
import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, statSync } from 'node:fs'
import { createServer as http } from 'node:http'
import { createServer as https } from 'node:https'
import { createServer as tcp } from 'node:net'
import { join, normalize } from 'node:path'

const cfg = JSON.parse(process.argv[2])

function handle(scheme) {
  return (req, res) => {
    const url = new URL(req.url, 'http://lab')
    // /upload hashes what it receives instead of echoing it (big uploads).
    if (url.pathname === '/upload') {
      const hash = createHash('sha256')
      let n = 0
      req.on('data', (d) => {
        n += d.length
        hash.update(d)
      })
      req.on('end', () => res.end(`upload ${n} ${hash.digest('hex')}`))
      return
    }
    // /redirect?to=URL answers 302 to that URL (a redirect off the allow list).
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end()
      return
    }
    // /stream?n=N&ms=M sends N chunked lines, one every M ms (a long-lived response).
    if (url.pathname === '/stream') {
      const n = Number(url.searchParams.get('n') ?? 5)
      const ms = Number(url.searchParams.get('ms') ?? 200)
      res.writeHead(200, { 'content-type': 'text/plain' })
      let i = 0
      const tick = setInterval(() => {
        res.write(`line ${i}\n`)
        if (++i === n) {
          clearInterval(tick)
          res.end()
        }
      }, ms)
      res.on('close', () => clearInterval(tick))
      return
    }
    let body = ''
    req.on('data', (d) => {
      body += d
    })
    req.on('end', () => {
      const bytes = /^\/bytes\/(\d+)$/.exec(url.pathname)
      if (bytes) {
        const n = Number(bytes[1])
        res.writeHead(200, { 'content-length': n, 'content-type': 'application/octet-stream' })
        res.end(Buffer.alloc(n, 120))
        return
      }
      if (url.pathname.startsWith('/files/') && cfg.files) {
        const file = normalize(join(cfg.files, url.pathname.slice('/files/'.length)))
        if (!file.startsWith(cfg.files)) return res.writeHead(403).end()
        try {
          // A directory is served by its index.html: a PEP 503 simple index is such a tree
          // (/simple/<name>/ lists the files), and pip wants it as text/html.
          const path = url.pathname.endsWith('/') ? join(file, 'index.html') : file
          const st = statSync(path)
          if (!st.isFile()) throw new Error('not a file')
          const type = path.endsWith('.html') ? 'text/html' : 'application/octet-stream'
          res.writeHead(200, { 'content-length': st.size, 'content-type': type })
          createReadStream(path).pipe(res)
        } catch {
          res.writeHead(404).end('no such file\n')
        }
        return
      }
      res.end(`lab ${scheme} ${req.method} ${url.pathname}${body ? ` ${body}` : ''}`)
    })
  }
}

const listeners = [
  http(handle('http')).listen(cfg.httpPort, cfg.address),
  https({ cert: readFileSync(cfg.cert), key: readFileSync(cfg.key) }, handle('https')).listen(
    cfg.httpsPort,
    cfg.address,
  ),
  tcp((s) => {
    s.setNoDelay(true)
    s.on('error', () => s.destroy())
    s.pipe(s)
  }).listen(cfg.echoPort, cfg.address),
]
let up = 0
for (const l of listeners)
  l.once('listening', () => {
    if (++up === listeners.length) process.stdout.write('ready\n')
  })
