// Attack (eighteenth outsider pass; surface: what a stdio server's interpreter loads at start-up from a
// place outside every root; src/mcp-client/home-includes.ts reads `.pth` lines of the USER site only).
// Since the seventeenth pass a user-site `.pth` (an editable install, `pip install --user -e ~/proj`)
// naming a root's folder makes HOME unfit. The same editable install into the interpreter the server
// runs (a venv outside every root, or a pyenv version, `~/.pyenv/versions/*/lib/python*/site-packages`,
// which the HOME walk even skips) writes the same `.pth` into that interpreter's own site-packages, and
// nothing reads it: mcp.json's `command` is the venv's python (outside every root), the args `-m tool`
// name no root, and python puts W/src on sys.path at start-up and imports the block's module.
//
// Reproduction: a session on W; V a venv outside every root (`python3 -m venv --without-pip V`) whose
// site-packages holds `__editable__.proj-0.1.pth` = W/src (what pip's editable install of ~/proj writes
// with a setuptools/hatchling backend). The block writes W/src/proj_tools.py and connects a server
// `V/bin/python -c "import proj_tools"` (resp. `-m proj_tools`). Expected: refused (or the venv's
// .pth not honoured); the marker never written.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { attackBase, attackFolders, connectEach, landed, runEngine } from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-venv-pth-')

test("an editable install's .pth in the server's own venv naming a root's folder does not reach the server's python", () => {
  const { W, home, outside, marker } = attackFolders(base)
  const V = join(base, 'venvs', 'mcp')
  mkdirSync(join(W, 'src'))
  const made = spawnSync('python3', ['-m', 'venv', '--without-pip', V], { encoding: 'utf8' })
  assert.equal(made.status, 0, `this test needs python3 -m venv: ${made.stderr}`)
  const lib = join(V, 'lib')
  const version = readdirSync(lib).find((n) => n.startsWith('python'))
  assert.ok(version !== undefined, 'the venv has lib/python3.X')
  const site = join(lib, version, 'site-packages')
  mkdirSync(site, { recursive: true })
  writeFileSync(join(site, '__editable__.proj-0.1.pth'), `${W}/src\n`)
  const module = `open(${JSON.stringify(marker)}, 'a').write("W/src/proj_tools.py, written by the block, imported on the host through the server venv's editable .pth\\n")\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      py: {
        command: join(V, 'bin', 'python'),
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
      `open(W + '/src/proj_tools.py', 'w').write(${JSON.stringify(module)})`,
      "print('planted')",
      ...connectEach(['py']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.equal(
    landed(marker),
    '',
    `the server ${V}/bin/python started although its site-packages' __editable__.proj-0.1.pth names the session ` +
      `root's ${W}/src, and the host's python imported the block's module: ${landed(marker)} (${out.slice(0, 400)})`,
  )
})
