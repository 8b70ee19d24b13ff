// Attack (eleventh outsider pass; README, MCP: the example mcp.json server is `"files": {"command": "npx",
// "args": ["-y", "some-mcp-server"]}`; SECURITY.md, MCP server launch (tenth pass): a stdio server starts
// in `<home>/mcp-servers/` so that "no file a sandbox wrote may choose its code", and a command inside a
// root is refused; Roots: "A root that contains the vis home (a workspace at `$HOME`) is allowed"). npx
// decides what it runs from npm's USER config, `$HOME/.npmrc`, which the server inherits through HOME:
// `prefix=` names the global folder whose `bin/` npx runs a command from before its cache or the registry
// (and `script-shell=`, `node-options=` would do as well). With a session rooted at the person's home, a
// block writes `~/.npmrc` (`prefix=~/.local/npm`) and `~/.local/npm/bin/some-mcp-server`, then
// `mcp_connect('files')`: the host's `npx -y some-mcp-server` runs the block's script, unconfined, as the
// user. The launch check passes: `npx` is /usr/bin/npx, the cwd is the vis home's mcp-servers, PATH clean.
// The same program named directly in mcp.json would be refused as lying in a root.
//
// Reproduction: a private HOME H (the whole process tree), an engine with the server above (offline, so
// npx asks no registry), a session on H; one block plants and connects. A fix: give stdio servers an npm
// user config the host owns (`npm_config_userconfig` pointing into the vis home, `npm_config_globalconfig`
// likewise, and a cache outside every root), or refuse a launch whose HOME (npm's config and cache, uv's)
// lies inside a live root.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { homeAt, privateHomeLayout, runTsxHost } from './tsx-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-npmrc-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'npmrc-home-root-host.ts')

test('a block in a session rooted at $HOME cannot choose, through ~/.npmrc, what an mcp.json `npx -y` server runs', async () => {
  const { H, outside, marker } = privateHomeLayout(base)
  const r = await runTsxHost(fixture, [H, marker], outside, homeAt(H))
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /planted/, out)
  assert.ok(
    !existsSync(marker),
    `the block wrote ~/.npmrc and a program under the prefix it names; mcp_connect('files') made the host's ` +
      `\`npx -y some-mcp-server\` run it outside every jail: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.slice(0, 300)})`,
  )
})
