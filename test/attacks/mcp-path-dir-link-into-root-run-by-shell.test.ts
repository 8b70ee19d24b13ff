// Attack (seventeenth outsider pass; surface: src/mcp-client/launch.ts cleanPath / checkArgs). A bare
// `command` found on PATH is judged by its real path, so a PATH folder's link into a root (`npm link`
// makes <prefix>/bin/<name> -> <prefix>/lib/node_modules/<name>/..., and <prefix>/lib/node_modules/<name>
// a link to the project being developed; a person's `ln -s ~/proj/bin/tool /usr/local/bin/`) is refused
// as mcp.json's `command`. PATH itself is judged by its folders only (cleanPath: an entry in a root is
// passed over), never by the links inside them, and the args judge a bare name as a relative path under
// the cwd. So the same program named inside the args, where the server's shell (or npx, or any program
// the server runs by name) finds it on that PATH, runs the block's file: `sh -c 'tool'`, `bash -lc
// "my-mcp-server"`.
//
// Reproduction: D=<base>/usr-local-bin (outside every root) holding `tool` -> W/bin/tool; PATH=D:/usr/bin:/bin
// in mcp.json's env; a session on W. Servers `control` (command `tool`, bare) and `shell` (command /bin/sh,
// args -c 'tool; sleep 3'). The block writes W/bin/tool (a script appending to a marker outside W) and
// connects both. Expected: both refused with mcp.launch-denied (or the link passed over); marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, runEngine } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-path-dir-link-'))
after(() => rmSync(base, { recursive: true, force: true }))

test("a PATH folder's link into a root is not run by name from a server's args", () => {
  const W = join(base, 'work')
  const D = join(base, 'usr-local-bin')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [W, join(W, 'bin'), D, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  // The person's linked development build (npm link, ln -s): outside the root, leading into it.
  symlinkSync(join(W, 'bin', 'tool'), join(D, 'tool'))
  const PATH = `${D}:/usr/bin:/bin`
  const script = `#!/bin/sh\necho "W/bin/tool, written by the block, run on the host by the server's shell through PATH's ${D}/tool" >> ${JSON.stringify(marker)}\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: { command: 'tool', args: [], env: { PATH }, timeout_ms: 6_000 },
      shell: { command: '/bin/sh', args: ['-c', 'tool; sleep 3'], env: { PATH }, timeout_ms: 6_000 },
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      `open(W + '/bin/tool', 'w').write(${JSON.stringify(script)})`,
      "os.chmod(W + '/bin/tool', 0o755)",
      "print('planted')",
      ...connectEach(['control', 'shell']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(
    out,
    /control refused mcp\.launch-denied/,
    `the bare command tool (a link into W) is refused (${out})`,
  )
  assert.ok(
    !existsSync(marker),
    `args ['-c', 'tool; sleep 3'] passed the launch check (PATH judged by its folders, not the links in them) and ` +
      `the host's shell ran the block's W/bin/tool through ${D}/tool: ` +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
  assert.match(out, /shell refused mcp\.launch-denied/, out)
})
