// The eighteenth outsider pass's judgement of a stdio server's own install (src/mcp-client/server-install.ts,
// called by launch.ts stdioLaunch), in both directions, against a real session root (noteSessionRoot marks
// it as a session does), a real venv made by python3 -m venv, real git worktrees and real links: a venv's
// `.pth` naming a root's folder (or a folder holding one, or an import line whose module names one), a
// worktree's `.git` file naming a root's repository, and a `node_modules` link into a root are refused,
// naming the file and the root; an ordinary venv (its own `.pth` naming a folder outside every root, an
// import line naming none), an ordinary repository and its worktree outside every root, and node_modules
// whose links stay outside every root still start. The attacks themselves are
// test/attacks/mcp-venv-editable-pth-in-root, mcp-args-git-worktree-of-root-repo and
// mcp-args-server-node-modules-link-into-root.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type LaunchConfig, stdioLaunch } from '../../src/mcp-client/launch.js'
import { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { tempDir } from './helpers.js'

const base = realpathSync(tempDir('launch-install'))
after(() => rmSync(base, { recursive: true, force: true }))
const visHome = join(base, 'vis-home')
const root = join(base, 'projects', 'work')
const outside = join(base, 'outside')
for (const d of [visHome, join(root, 'src'), join(root, 'lib'), outside]) mkdirSync(d, { recursive: true })
noteSessionRoot(root)

// 'started' or the refusal's message (always mcp.launch-denied).
function launch(config: Partial<LaunchConfig> & { args?: string[] }): string {
  try {
    stdioLaunch('s', { command: '/bin/sh', env: {}, ...config }, visHome, {})
    return 'started'
  } catch (err) {
    assert.ok(err instanceof VisError, String(err))
    assert.equal(err.code, 'mcp.launch-denied', err.message)
    return err.message
  }
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`)
}

test("the server's python: a .pth naming a root's folder is refused, an ordinary venv starts", () => {
  const V = join(outside, 'venv')
  run('python3', ['-m', 'venv', '--without-pip', V])
  const lib = join(V, 'lib')
  const version = readdirSync(lib).find((n) => n.startsWith('python'))
  assert.ok(version !== undefined)
  const site = join(lib, version, 'site-packages')
  mkdirSync(site, { recursive: true })
  const python = join(V, 'bin', 'python')
  mkdirSync(join(outside, 'src'))
  // An ordinary venv: an editable install of a project outside every root, and an import line (as
  // setuptools' distutils-precedence.pth) naming no root.
  writeFileSync(join(site, '__editable__.other-0.1.pth'), `${outside}/src\n`)
  writeFileSync(
    join(site, 'distutils-precedence.pth'),
    "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'\n",
  )
  assert.equal(launch({ command: python, args: ['-m', 'some_server'] }), 'started')

  const pth = join(site, '__editable__.proj-0.1.pth')
  writeFileSync(pth, `${root}/src\n`)
  assert.match(
    launch({ command: python, args: ['-m', 'some_server'] }),
    new RegExp(`${pth} puts ${root}/src on its python's path.*lies in the session root ${root}`),
  )
  // A folder holding the root: the root becomes an importable package.
  writeFileSync(pth, `${join(base, 'projects')}\n`)
  assert.match(launch({ command: python, args: [] }), new RegExp(`holds the session root ${root}`))
  // setuptools' editable finder: an import line whose module (in the site) names the root's folder.
  writeFileSync(pth, 'import __editable___proj_0_1_finder; __editable___proj_0_1_finder.install()\n')
  writeFileSync(
    join(site, '__editable___proj_0_1_finder.py'),
    `MAPPING = {'proj': '${root}/src/proj'}\ndef install():\n    pass\n`,
  )
  assert.match(
    launch({ command: python, args: [] }),
    new RegExp(`__editable___proj_0_1_finder.py \\(run by ${pth}'s import line.*names ${root}/src/proj`),
  )
  // A package in the site linked into the root.
  unlinkSync(pth)
  assert.equal(launch({ command: python, args: [] }), 'started')
  symlinkSync(join(root, 'src'), join(site, 'proj'))
  assert.match(
    launch({ command: python, args: [] }),
    new RegExp(`${site}/proj .*lies in the session root ${root}`),
  )
  unlinkSync(join(site, 'proj'))
  assert.equal(launch({ command: python, args: [] }), 'started')
})

test("a worktree whose .git file names a root's repository is refused; an ordinary repository and worktree start", () => {
  const git = (...args: string[]) =>
    run('git', ['-c', 'user.name=P', '-c', 'user.email=p@example.invalid', ...args])
  const repo = join(outside, 'repo')
  git('init', '-q', repo)
  writeFileSync(join(repo, 'README'), 'x\n')
  git('-C', repo, 'add', 'README')
  git('-C', repo, 'commit', '-qm', 'one')
  const own = join(outside, 'own-wt')
  git('-C', repo, 'worktree', 'add', '-q', own)
  for (const d of [repo, own, join(repo, '.git')])
    assert.equal(launch({ command: 'git', args: ['-C', d, 'status'] }), 'started', d)
  assert.equal(launch({ command: 'git', args: ['status'], cwd: own }), 'started')

  git('init', '-q', root)
  writeFileSync(join(root, 'README'), 'x\n')
  git('-C', root, 'add', 'README')
  git('-C', root, 'commit', '-qm', 'one')
  const wt = join(outside, 'wt')
  git('-C', root, 'worktree', 'add', '-q', wt)
  const why = new RegExp(
    `${wt}/\\.git names the git folder ${root}/\\.git/worktrees/wt .*lies in the session root ${root}`,
  )
  assert.match(launch({ command: 'git', args: ['-C', wt, 'status'] }), why)
  // From the cwd, and from a folder below the worktree (git discovers the .git file above it).
  assert.match(launch({ command: 'git', args: ['status'], cwd: wt }), why)
  mkdirSync(join(wt, 'sub'))
  assert.match(launch({ command: 'git', args: ['-C', join(wt, 'sub'), 'status'] }), why)
})

test('node_modules links into a root are refused; links outside every root start', () => {
  const srv = join(outside, 'srv')
  const nm = join(srv, 'node_modules')
  mkdirSync(join(nm, '@scope'), { recursive: true })
  mkdirSync(join(outside, 'lib'))
  writeFileSync(join(srv, 'index.js'), "require('lib')\n")
  symlinkSync(join(outside, 'lib'), join(nm, 'lib'))
  symlinkSync(join(outside, 'lib'), join(nm, '@scope', 'lib'))
  const node = process.execPath
  assert.equal(launch({ command: node, args: [join(srv, 'index.js')] }), 'started')

  symlinkSync(join(root, 'lib'), join(nm, '@scope', 'planted'))
  assert.match(
    launch({ command: node, args: [join(srv, 'index.js')] }),
    new RegExp(`${nm}/@scope/planted .*lies in the session root ${root}`),
  )
  unlinkSync(join(nm, '@scope', 'planted'))
  // A script in a folder below: Node resolves from every folder above it.
  mkdirSync(join(srv, 'dist'))
  writeFileSync(join(srv, 'dist', 'main.js'), '')
  symlinkSync(join(root, 'lib'), join(nm, 'lib2'))
  assert.match(
    launch({ command: node, args: [join(srv, 'dist', 'main.js')] }),
    new RegExp(`${nm}/lib2 .*lies in the session root ${root}`),
  )
  unlinkSync(join(nm, 'lib2'))
  assert.equal(launch({ command: node, args: [join(srv, 'dist', 'main.js')] }), 'started')
})
