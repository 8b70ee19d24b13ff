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
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { loopbackRegistry } from './fixtures/loopback-npm-registry.js'
import { homeAt, privateHomeLayout, runTsxHost } from './tsx-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-npx-walkup-'))
const closers: (() => void)[] = []
after(() => {
  for (const c of closers) c()
  rmSync(base, { recursive: true, force: true })
})
const fixture = join(import.meta.dirname, 'fixtures', 'npx-private-home-walkup-host.ts')

test('an MCP server under the private HOME does not load modules a block planted in ~/node_modules', async () => {
  const { H, outside, marker } = privateHomeLayout(base)
  // The server asks for supports-color optionally at load, as debug's src/node.js does.
  const reg = await loopbackRegistry(
    join(base, 'registry'),
    "#!/usr/bin/env node\n// As debug's src/node.js does at load:\ntry { require('supports-color') } catch {}\nprocess.stdin.resume()\n",
  )
  closers.push(reg.close)
  const r = await runTsxHost(fixture, [H, marker, reg.url], outside, homeAt(H))
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
