// Attack (thirteenth outsider pass; surface: the twelfth pass's rule on mcp.json `env`,
// src/mcp-client/server-env.ts pathsIn). Each part of a value is "taken as a path from the server's cwd"
// with path.resolve, but npm expands `~/` and `${VAR}` in its configuration (nopt's path type and
// @npmcli/config's envReplace; `HOME=/h npm_config_prefix='~/x' npm prefix -g` prints /h/x, and so does
// '${HOME}/x'). So `npm_config_prefix: "~/proj/npm-global"` or `"${HOME}/proj/npm-global"`, the spellings
// people write in configuration files, is judged as `<vis home>/mcp-servers/~/proj/npm-global`: a place in
// the vis home, exempt. npm reads it as $HOME/proj/npm-global, the session root's folder, and `npx -y`
// runs <prefix>/bin/some-mcp-server, which the block planted (the twelfth pass's PREFIX attack, spelled
// with a tilde). HOME itself lies in no root here (the root is $HOME/proj), so no private HOME is made and
// the tilde means the host's HOME.
//
// Reproduction: HOME=<tmp>/home (this test's own), session on W=$HOME/proj; servers `control`
// (npm_config_prefix=W/npm-global), `tilde` (~/proj/npm-global) and `braces` (${HOME}/proj/npm-global),
// all `npx -y some-mcp-server` against a loopback registry. The block plants a global install of
// some-mcp-server in W/npm-global and connects the three. Expected: all three refused with
// mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { loopbackRegistry } from './fixtures/loopback-npm-registry.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-tilde-'))
const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-tilde-prefix-host.ts')

test('npm_config_prefix spelled with ~ or $HOME-in-braces into a root is refused like the plain path', async () => {
  const HOME = join(base, 'home')
  const W = join(HOME, 'proj')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [HOME, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const reg = await loopbackRegistry(join(base, 'registry'))
  closers.push(reg.close)
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), fixture, W, home, marker, reg.url],
      { cwd: outside, env: { ...process.env, HOME, VIS_HOME: home } },
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
  assert.match(out, /control: .*mcp\.launch-denied/, `npm_config_prefix=W/npm-global is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    `npm_config_prefix=~/proj/npm-global or \${HOME}/proj/npm-global passed the launch check (judged as a place ` +
      `in the vis home) and npx ran the block's W/npm-global/bin/some-mcp-server on the host: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 600)})`,
  )
})
