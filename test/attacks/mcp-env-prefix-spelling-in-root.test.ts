// Attack (twelfth outsider pass; surface: the eleventh pass's refusal of mcp.json `env` locations inside a
// root, src/mcp-client/server-home.ts LOCATION_VARS: "an env location (HOME, XDG_*_HOME, PYTHONUSERBASE,
// PIP_CONFIG_FILE, UV_CONFIG_FILE, npm_config_userconfig/globalconfig/prefix/cache, npm's in any case) inside
// a root is refused"). npm takes its global prefix from two more variables, PREFIX and DESTDIR
// (@npmcli/config loadGlobalPrefix: `if (this.env.PREFIX) this.globalPrefix = this.env.PREFIX`, and
// DESTDIR is put in front of it), and `npx -y <pkg>` runs <globalPrefix>/bin/<bin> when the global tree holds
// the package, before installing anything. `npm_config_prefix: W/npm-global` is refused; `PREFIX:
// W/npm-global` (the same setting, npm's other spelling) is not: a block writes
// W/npm-global/lib/node_modules/some-mcp-server and W/npm-global/bin/some-mcp-server, calls
// mcp_connect('files'), and the host's npx runs the block's script, unconfined.
//
// Reproduction: session on W; servers `refused` (env npm_config_prefix=W/npm-global, the control) and `files`
// (env PREFIX=W/npm-global), both `npx -y some-mcp-server` against a loopback registry. Expected: both
// refused with mcp.launch-denied (and DESTDIR with them), the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { loopbackRegistry } from './fixtures/loopback-npm-registry.js'
import { runTsxHost } from './tsx-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-prefix-'))
const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-env-prefix-host.ts')

test("npm's PREFIX spelling of the global prefix in mcp.json env is refused like npm_config_prefix", async () => {
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const reg = await loopbackRegistry(join(base, 'registry'))
  closers.push(reg.close)
  const r = await runTsxHost(fixture, [W, home, marker, reg.url], outside, { VIS_HOME: home })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(
    out,
    /control: .*mcp\.launch-denied|control: .*lies in the session root/,
    `npm_config_prefix in W is refused (${out})`,
  )
  assert.ok(
    !existsSync(marker),
    `env PREFIX=W/npm-global passed the launch check and npx ran the block's W/npm-global/bin/some-mcp-server on ` +
      `the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 500)})`,
  )
})
