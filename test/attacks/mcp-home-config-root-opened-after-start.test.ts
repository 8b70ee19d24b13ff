// Attack (fifteenth outsider pass; surface: running stdio servers re-judged before each call,
// src/mcp-client/launch.ts judgeRunning). At a start, a server whose HOME holds a root in one of
// USER_PLACES (~/.config, ~/.local, ~/.npmrc...) gets a private HOME (util/tool-home.ts homeInRoot). A
// running server is judged again before each call, but for HOME only `places.holding(HOME)` is asked: a
// root opened later INSIDE HOME, at ~/.config, is not noticed. Git reads ~/.config/git/config at every
// invocation, and a git server runs git at every call: the new session's block writes core.fsmonitor there,
// and the running server's next call runs the block's hook on the host, unconfined. The same server
// started now gets a private HOME.
//
// Reproduction: HOME=H; the person's git server (python, outside every root, runs `git status` in a
// repository outside every root per call). Session S1 (root W) connects it; session S2 opens on H/.config
// and its block writes H/.config/git/config (core.fsmonitor = H/.config/git/fsmon.sh) and the hook (appends
// to a marker outside); S1 calls the tool; then S1 reconnects (the control: HOME is now a private one).
// Expected: the hook never runs on the host (the running server stopped or given no such HOME); no marker.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { LaterRootSpec } from './fixtures/mcp-root-opened-later-host.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-home-later-'))
after(() => rmSync(base, { recursive: true, force: true }))
const fixture = join(import.meta.dirname, 'fixtures', 'mcp-root-opened-later-host.ts')

// A minimal MCP stdio server (newline-delimited JSON-RPC): `status` runs git status in its repository,
// `home` says the HOME it has.
const server = (repo: string) => `import json, os, subprocess, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, i = m.get("method"), m["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "git", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": n, "description": n, "inputSchema": {"type": "object", "properties": {}}} for n in ("status", "home")]}})
    elif method == "tools/call":
        if m["params"]["name"] == "home":
            text = "HOME=" + os.environ.get("HOME", "")
        else:
            r = subprocess.run(["git", "-C", ${JSON.stringify(repo)}, "status", "--porcelain"], capture_output=True, text=True, timeout=10)
            text = "git status: %d" % r.returncode
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": i, "result": {}})
`

test('a running server whose HOME gains a root at ~/.config does not read it', () => {
  const H = join(base, 'home')
  const C = join(H, '.config')
  const W = join(base, 'work')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const repo = join(outside, 'repo')
  const serverDir = join(base, 'server')
  for (const d of [H, C, W, home, outside, repo, serverDir]) mkdirSync(d)
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: H, VIS_HOME: home }
  delete env.XDG_CONFIG_HOME
  delete env.GIT_CONFIG_GLOBAL
  const init = spawnSync('git', ['init', '-q', repo], { encoding: 'utf8', env })
  assert.equal(init.status, 0, init.stderr)
  const file = join(serverDir, 'git_server.py')
  writeFileSync(file, server(repo))
  const marker = join(outside, 'ran-on-the-host')
  const hook = `#!/bin/sh\necho "H/.config/git/fsmon.sh, written by the sandbox of a session opened after the server started, run by the host's git" >> ${JSON.stringify(marker)}\nexit 1\n`
  const config = `[core]\n\tfsmonitor = ${C}/git/fsmon.sh\n`
  const spec: LaterRootSpec = {
    W,
    R: C,
    home,
    server: { name: 'git', command: 'python3', args: [file], env: {} },
    files: [
      { path: 'git/fsmon.sh', text: hook, mode: 0o755 },
      { path: 'git/config', text: config },
    ],
    call: 'print(await mcp_git_status())',
    reconnect: [
      'try:',
      '    await mcp_connect("git")',
      '    print(await mcp_git_home())',
      'except Exception as e:',
      "    print('refused', getattr(e, 'code', ''), str(e)[:200])",
    ].join('\n'),
  }
  const r = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), fixture, JSON.stringify(spec)],
    {
      cwd: outside,
      env,
      encoding: 'utf8',
      timeout: 240_000,
    },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const out = r.stdout.trim().replace(/\n/g, ' | ')
  assert.match(out, /connect: /, out)
  assert.match(out, /plant: planted/, out)
  assert.ok(
    !out.includes(`reconnect: HOME=${H} `),
    `a start after H/.config opened gets a private HOME (${out})`,
  )
  assert.ok(
    !existsSync(marker),
    `the server S1 started with HOME=${H} kept it after session S2 opened H/.config (judgeRunning asks only ` +
      `whether a root holds HOME), and its git ran the hook S2's sandbox wrote: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 600)})`,
  )
})
