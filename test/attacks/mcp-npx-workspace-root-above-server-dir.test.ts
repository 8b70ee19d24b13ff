// Attack (thirteenth outsider pass; surface: where a stdio MCP server starts when the vis home lies in a
// root, src/mcp-client/launch.ts defaultServerDir: "Its package.json stops npm's walk up to a parent's
// node_modules (a root holding the home)"). It stops the walk for the FIRST package.json only: npm then goes
// on walking up looking for a workspace root (@npmcli/config loadLocalPrefix: a parent package.json whose
// `workspaces` include the directory becomes the local prefix), and npx (npm exec in an implicit workspace)
// runs a bin it finds in that prefix's node_modules/.bin before installing anything. With the README's
// "workspace at $HOME" (a session on ~, the default ~/.vis inside it), a block writes
// ~/package.json {"workspaces": [".vis/mcp-servers"]} and ~/node_modules/.bin/some-mcp-server; the host
// starts `npx -y some-mcp-server` in ~/.vis/mcp-servers (private HOME or not: the walk is from the cwd), and
// npx runs the block's script, unconfined. The masked vis home does not help: the block names the folder, it
// need not see it.
//
// Reproduction: HOME=H (this test's own), vis home H/.vis, session on H, `files: npx -y some-mcp-server`
// against a loopback registry. The block writes H/package.json (workspaces [".vis/mcp-servers"]) and
// H/node_modules/{some-mcp-server,.bin}, then mcp_connect('files'). Expected: the registry's server runs (or
// the launch is refused); the marker is never written.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { loopbackRegistry } from './fixtures/loopback-npm-registry.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-npx-workspace-'))
const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'npx-workspace-root-host.ts')

test('npx for an MCP server does not take a workspace root a block declared above the server folder', async () => {
  const H = join(base, 'home')
  const outside = join(base, 'outside')
  const tmp = join(base, 'tmp')
  for (const d of [H, outside, tmp]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const reg = await loopbackRegistry(join(base, 'registry'))
  closers.push(reg.close)
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), fixture, H, marker, reg.url],
      {
        cwd: outside,
        // TMPDIR under base: the server's private HOME (vis-mcp-home-*) goes with the test's folder.
        env: { ...process.env, HOME: H, VIS_HOME: join(H, '.vis'), TMPDIR: tmp },
      },
    )
    closers.push(() => child.kill('SIGKILL'))
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
  assert.match(out, /planted/, `the block planted its files (${out})`)
  assert.ok(
    !existsSync(marker),
    `npx, started in H/.vis/mcp-servers, took the block's H/package.json as its workspace root and ran the ` +
      `block's H/node_modules/.bin/some-mcp-server on the host: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
