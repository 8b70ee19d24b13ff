// Attack (seventh outsider pass; SECURITY.md Roots: a root CONTAINING the vis-runtime package gets it
// bound read-only and "the host file tools refuse to write, patch, move, delete or create directories
// inside the package (tool.read-only-path)"; a root INSIDE a CPython distribution the host runs is
// refused (policy.root-in-runtime)): the remaining case, a root that CONTAINS a distribution the host
// runs from outside the package (`VIS_PYTHON_HOME`, which README offers for "a distribution root to use
// as is (also a pyenv prefix)", e.g. ~/.pyenv/versions/3.11.9 under a workspace at $HOME, which README
// allows), is covered in the jail (the distribution is bound read-only: a block's open() gets EROFS)
// but NOT in the host file tools, which run unconfined on the host. `await write(...)` lands a `.pth`
// file in the distribution's site-packages, and `site` runs every `import` line of a `.pth` at the
// start of each interpreter that uses that distribution unconfined: `vis python`, the trusted extension
// worker. A complete escape from one host-tool call.
//
// Reproduction: a copy of the staged distribution at W/dist is VIS_PYTHON_HOME; a real engine session
// on root W calls `write('dist/lib/python3.11/site-packages/zz_vis7.pth', "import os; …")` (the line
// writes a marker outside every root); then `vis python -c pass` runs on the host. It fails on the
// current code because the write lands and `vis python` runs the planted line (a fix: the host tools
// refuse paths inside every distribution the host runs, as they do for the package).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

const repo = join(import.meta.dirname, '..', '..')

test('the host file tools do not write into a CPython distribution the host runs, inside a root', async () => {
  const staged = join(repo, 'cpython-dist', '3.11', 'linux-x86_64-gnu', 'python')
  assert.ok(existsSync(staged), `the staged CPython 3.11 is missing at ${staged}: run npm install`)
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-distroot-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-distroot-root-'))
  const outside = mkdtempSync(join(tmpdir(), 'vis-attack-distroot-outside-'))
  made.push(home, root, outside)
  cpSync(staged, join(root, 'dist'), { recursive: true, verbatimSymlinks: true })
  const site = readdirSync(join(root, 'dist', 'lib')).find((n) => /^python3\.\d+$/.test(n))!
  const marker = join(outside, 'ran-on-the-host')
  process.env.VIS_HOME = home
  const saved = process.env.VIS_PYTHON_HOME
  process.env.VIS_PYTHON_HOME = join(root, 'dist')
  try {
    const engine = await createEngine({ home, python: '3.11', pool: { size: 0 }, extensions: false })
    try {
      const s = await engine.createSession({ roots: [root] })
      const pth = `dist/lib/${site}/site-packages/zz_vis7.pth`
      const line = `import os; open(${JSON.stringify(marker)}, 'w').write('unconfined')\n`
      const r = await engine.runBlock(s.id, {
        code: [
          'try:',
          `    open(${JSON.stringify(pth)}, 'w').write('x')`,
          "    print('open: wrote')",
          'except OSError as e:',
          "    print('open:', e.errno)",
          'try:',
          `    print('write:', (await write(${JSON.stringify(pth)}, ${JSON.stringify(line)}))['path'])`,
          'except Exception as e:',
          "    print('write refused:', getattr(e, 'code', e))",
        ].join('\n'),
        timeout_ms: 60_000,
      })
      assert.equal(r.block.error, null, JSON.stringify(r.block.error))
      assert.match(r.block.stdout ?? '', /open: 30/, 'the jail binds the distribution read-only (EROFS)')
    } finally {
      await engine.close()
    }
    // The person's next `vis python` on this machine.
    const run = spawnSync(process.execPath, [join(repo, 'bin', 'vis.js'), 'python', '-c', 'pass'], {
      env: { ...process.env, VIS_HOME: home, VIS_PYTHON_HOME: join(root, 'dist') },
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.ok(
      !existsSync(marker),
      `a block's write() put a .pth into the distribution the host runs (inside its root), and \`vis python\` ran it on the host (exit ${run.status}${run.stderr ? `, ${run.stderr.trim().slice(0, 200)}` : ''})`,
    )
  } finally {
    if (saved === undefined) delete process.env.VIS_PYTHON_HOME
    else process.env.VIS_PYTHON_HOME = saved
  }
})
