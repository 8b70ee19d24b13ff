// Attack (eighteenth outsider pass; surface: src/mcp-client/home-includes.ts userSite). Since the
// seventeenth pass each user-site `.pth` line is judged, and one naming a place IN a root makes HOME unfit.
// But a `.pth` line puts a folder on sys.path, and python imports every package BELOW it by name: a line
// naming the folder that HOLDS a root (`~/projects`, the old way to make every project importable, or a
// `src`-less editable install of a workspace) passes, and `import proj_tools` is the session root
// ~/projects/proj_tools. The env rule refuses exactly this for PYTHONPATH since the seventeenth pass
// (a folder holding a root); the user site does the same thing unjudged.
//
// Reproduction: HOME=H, a session on W=H/projects/proj_tools; H/.local/lib/pythonX.Y/site-packages/
// projects.pth holding H/projects. The block writes W/__init__.py (appends to a marker outside W) and
// connects a server `python3 -c "import proj_tools"`. Expected: the server gets a private HOME (no user
// site) or is refused; the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-user-site-holding-')
const hostHome = process.env.HOME
test.after(() => {
  process.env.HOME = hostHome
})

test("a user-site .pth naming the folder that holds a root does not let the server's python import the root", () => {
  const H = join(base, 'home')
  const W = join(H, 'projects', 'proj_tools')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  })
  assert.equal(probe.status, 0, 'this test needs python3')
  const site = join(H, '.local', 'lib', `python${probe.stdout.trim()}`, 'site-packages')
  for (const d of [W, home, outside, site]) mkdirSync(d, { recursive: true })
  const marker = join(outside, 'ran-on-the-host')
  writeFileSync(join(site, 'projects.pth'), `${join(H, 'projects')}\n`)
  process.env.HOME = H
  const module = `open(${JSON.stringify(marker)}, 'a').write("W/__init__.py, written by the block, imported on the host as proj_tools through the user site's projects.pth\\n")\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      py: {
        command: 'python3',
        args: [
          '-c',
          'import time\ntry:\n    import proj_tools\nexcept ImportError:\n    pass\ntime.sleep(3)',
        ],
        env: {},
        timeout_ms: 6_000,
      },
    },
    [
      `W = ${JSON.stringify(W)}`,
      `open(W + '/__init__.py', 'w').write(${JSON.stringify(module)})`,
      "print('planted')",
      ...connectEach(['py']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.equal(
    landed(marker),
    '',
    `the server got HOME=${H} although its user site's projects.pth puts ${join(H, 'projects')}, which holds the ` +
      `session root ${W}, on sys.path, and the host's python imported the block's package: ${landed(marker)} ` +
      `(${out.slice(0, 400)})`,
  )
})
