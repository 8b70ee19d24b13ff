// Attack (seventeenth outsider pass; surface: the args judgement, src/mcp-client/judge-word.ts and
// launch.ts checkArgs). Every argument is read as a path (relative ones against the server's cwd and every
// folder the args name), so `python3 -m notes` with the cwd above a root `notes` is refused: the word
// `notes` names <cwd>/notes. But `-m` takes a MODULE name, and Python maps a dotted name to a path:
// `-m notes.server` runs <sys.path entry>/notes/server.py, and with `-m` the cwd is sys.path[0]. The
// judgement reads `notes.server` as the file <cwd>/notes.server, which lies in the root only by the
// prefix of its name, not as a path (`notes.server` is no child of `notes`), so it passes, and python
// runs the block's notes/server.py on the host. A person's mcp.json that starts a server from the
// folder holding their projects (`"cwd": "~/projects", "args": ["-m", "notes.server"]`) while a session
// works on ~/projects/notes is that configuration.
//
// Reproduction: P=<base>/projects (the servers' cwd, outside every root), a session on W=P/notes.
// Servers `control` (python3 -m notes: the package's __main__, the word names P/notes) and `dotted`
// (python3 -m notes.server). The block writes W/__main__.py and W/server.py (each appends to a marker
// outside W) and connects both. Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-python-module-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('python3 -m <root>.module (a dotted module name under the cwd) is judged as the path it runs', () => {
  const P = join(base, 'projects')
  const W = join(P, 'notes')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [P, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // mcp.json's `cwd` (the outsider14 spec passes each server's fields to the engine as they are).
  const server = (args: string[]): Server =>
    ({ command: 'python3', args: [...args], env: {}, timeout_ms: 6_000, cwd: P }) as Server
  const module = (name: string) =>
    `import time\nopen(${JSON.stringify(marker)}, 'a').write("W/${name}, written by the block, run on the host by python3 -m\\n")\ntime.sleep(3)\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    { control: server(['-m', 'notes']), dotted: server(['-m', 'notes.server']) },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/__main__.py', 'w').write(${JSON.stringify(module('__main__.py'))})`,
      `open(W + '/server.py', 'w').write(${JSON.stringify(module('server.py'))})`,
      "print('planted')",
      ...connectEach(['control', 'dotted']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `python3 -m notes (P/notes) is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    "args ['-m', 'notes.server'] passed the launch check (read as the file <cwd>/notes.server, not as the " +
      "module path notes/server.py) and the host's python ran the block's module: " +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
  assert.match(out, /dotted refused mcp\.launch-denied/, out)
})
