// Attack (twelfth outsider pass; surface: the eleventh pass's private HOME for MCP stdio servers,
// src/mcp-client/server-home.ts). With the host's HOME in a session root (a workspace at $HOME, allowed)
// stdio servers get HOME=<vis home>/mcp-servers/home, so `npx -y some-mcp-server` installs the server into
// <vis home>/mcp-servers/home/.npm/_npx/<hash>/node_modules. The vis home is masked in every jail, but it
// lies INSIDE the root (~/.vis under ~): Node resolves a module the server does not ship by walking up every
// ancestor's node_modules, past the vis home to ~/node_modules, which the sandbox writes. Servers ask for
// uninstalled modules all the time: `debug` (under express, body-parser...) does
// `try { require('supports-color') } catch {}` at load, `ws` asks for `bufferutil` and `utf-8-validate`; all
// are optional peers npm does not install. So a block plants ~/node_modules/supports-color and calls
// mcp_connect(): the server, run by the host outside every jail, loads the block's code. Before the private
// HOME the server lived in the real ~/.npm/_npx, under ~ as well: the private HOME was meant to take the
// server's files out of the root, and its place inside the vis home inside the root does not.
//
// Reproduction: a private HOME H; a loopback npm registry serving `some-mcp-server` (one file that asks for
// supports-color optionally, as debug does); an engine with `files: npx -y some-mcp-server` (registry env);
// a session on H; a block plants H/node_modules/supports-color and connects. Expected: the marker is not
// written (a private HOME outside every root, or NODE_PATH-free resolution that cannot reach a root).
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-npx-walkup-'))
let server: Server | undefined
after(() => {
  server?.close()
  server?.closeAllConnections()
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'npx-private-home-walkup-host.ts')

// A one-package registry on loopback: the packument and the tarball of some-mcp-server@1.0.0.
async function registry(): Promise<string> {
  const src = join(base, 'pkg-src', 'package')
  mkdirSync(src, { recursive: true })
  writeFileSync(
    join(src, 'package.json'),
    JSON.stringify({ name: 'some-mcp-server', version: '1.0.0', bin: { 'some-mcp-server': 'server.js' } }),
  )
  writeFileSync(
    join(src, 'server.js'),
    "#!/usr/bin/env node\n// As debug's src/node.js does at load:\ntry { require('supports-color') } catch {}\nprocess.stdin.resume()\n",
    { mode: 0o755 },
  )
  const tgz = join(base, 'some-mcp-server-1.0.0.tgz')
  execFileSync('tar', ['-czf', tgz, '-C', join(base, 'pkg-src'), 'package'])
  const bytes = readFileSync(tgz)
  server = createServer((req, res) => {
    const origin = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`
    if (req.url === '/some-mcp-server') {
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify({
          name: 'some-mcp-server',
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: 'some-mcp-server',
              version: '1.0.0',
              bin: { 'some-mcp-server': 'server.js' },
              dist: {
                tarball: `${origin}/some-mcp-server-1.0.0.tgz`,
                shasum: createHash('sha1').update(bytes).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
              },
            },
          },
        }),
      )
    } else if (req.url === '/some-mcp-server-1.0.0.tgz') {
      res.end(bytes)
    } else {
      res.statusCode = 404
      res.end('{}')
    }
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

test('an MCP server under the private HOME does not load modules a block planted in ~/node_modules', async () => {
  const H = join(base, 'home')
  const outside = join(base, 'outside')
  mkdirSync(H)
  mkdirSync(outside)
  const marker = join(outside, 'ran-on-the-host')
  const url = await registry()
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    // spawnSync would block the registry's event loop: run the host process asynchronously.

    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), fixture, H, marker, url], {
      cwd: outside,
      env: { ...process.env, HOME: H, VIS_HOME: join(H, '.vis') },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the server npx installed under the private HOME (inside the vis home, inside the root H) resolved ` +
      `supports-color up to H/node_modules and ran the block's code on the host: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} (${out.slice(0, 400)})`,
  )
})
