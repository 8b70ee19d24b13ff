// Attack (eleventh outsider pass; SECURITY.md, MCP server launch: "a bare `command` is looked up on `PATH`
// passing over empty, relative and in-root entries", roots being "this process's or a live jail's"; Roots,
// the live-jail registry: each jail records its roots "by device:inode too ... a root renamed after its
// jail began, by another session or a person's `mv`, is still recognised"). src/mcp-client/launch.ts
// judges PATH entries (and `cwd`, and the command) by PATH STRINGS only: notedSessionRoots() and the live
// jails' `roots`, the real paths the roots had when their jails began. The registry's `rootIds` are never
// consulted there. A live session's root renamed by the person (`mv ~/proj ~/proj2`, then the project's
// venv named at its new place) is still the sandbox's, written through the jail's bind of the directory,
// but its new path is "outside every root" to the launch check: a block plants `.venv/bin/uvx` in its
// root, and `mcp_connect('fetch')` for a server configured as `uvx mcp-server-fetch` runs the block's
// script on the host, unconfined, as the user.
//
// Reproduction: an engine with `fetch: {command: uvx, env: {PATH: R2/.venv/bin:/usr/bin:/bin}}`; a session
// on R; block 1 writes R/.venv/bin/uvx (a shell script writing a marker outside every root); the person
// renames R to R2 while the session lives; block 2 calls mcp_connect('fetch'). The marker appears.
// A fix: judge PATH entries, cwd and the command by identity as well (each ancestor's device:inode
// against the live jails' rootIds and this process's open roots), as the home guard does.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { mcpEngine } from '../mcp/launch-engine.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-renamed-'))
after(() => rmSync(base, { recursive: true, force: true }))

test("a live session's root renamed by the person is still a root to the MCP server's PATH lookup", async () => {
  const R = join(base, 'proj')
  const R2 = join(base, 'proj2')
  const outside = join(base, 'outside')
  const home = join(base, 'home')
  mkdirSync(R)
  mkdirSync(outside)
  mkdirSync(home)
  const marker = join(outside, 'ran-on-the-host')
  const script = `#!/bin/sh\necho "planted uvx ran: $*" > ${JSON.stringify(marker)}\n`
  const engine = await mcpEngine(home, {
    fetch: {
      command: 'uvx',
      args: ['mcp-server-fetch'],
      env: { PATH: `${join(R2, '.venv', 'bin')}:/usr/bin:/bin` },
    },
  })
  let out = ''
  try {
    const s = await engine.createSession({ roots: [R] })
    const planted = await engine.runBlock(s.id, {
      code: [
        'import os',
        "b = os.path.join(os.getcwd(), '.venv', 'bin')",
        'os.makedirs(b)',
        `open(b + '/uvx', 'w').write(${JSON.stringify(script)})`,
        "os.chmod(b + '/uvx', 0o755)",
        "print('planted')",
      ].join('\n'),
      timeout_ms: 60_000,
    })
    out = `${planted.block.stdout ?? ''}${JSON.stringify(planted.block.error ?? null)}`
    assert.match(out, /planted/, out)
    // The person moves the project; the session (its worker, its jail) lives on.
    renameSync(R, R2)
    const r = await engine.runBlock(s.id, {
      code: [
        'try:',
        "    print(await mcp_connect('fetch'))",
        'except Exception as e:',
        "    print('connect:', type(e).__name__, str(e)[:300])",
      ].join('\n'),
      timeout_ms: 120_000,
    })
    out += ` | ${r.block.stdout ?? ''}${JSON.stringify(r.block.error ?? null)}`
  } finally {
    await engine.close()
  }
  assert.ok(
    !existsSync(marker),
    `the block planted .venv/bin/uvx in its root, the root was renamed while the session lived, and ` +
      `mcp_connect('fetch') ran the planted file on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} (${out.trim().slice(0, 400)})`,
  )
})
