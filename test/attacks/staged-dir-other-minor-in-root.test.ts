// Attack (eighth outsider pass; SECURITY.md Roots, "A root that contains a CPython distribution the host
// runs ... the jail binds it read-only, and the host file tools ... refuse to write ... inside it": the
// list is "every distribution resolved for a worker plus VIS_PYTHON_HOME"). VIS_PYTHON_STAGED_DIR (README,
// Environment: "where staged distributions live") holds one tree per minor, and the host runs every one
// of them: `vis python`, `VIS_PYTHON_VERSION=3.12 vis run`, `createRuntime({ python: '3.12' })`, the
// trusted extension worker and the layout parser of such a process (the last two with `site` on). Only
// the minor THIS process resolved for a worker is protected (runtimeTrees in root-guard.ts): every other
// staged minor in the same directory is an ordinary writable tree of a root that contains it (a staged
// dir under a workspace at $HOME, the case the seventh pass fixed for VIS_PYTHON_HOME).
//
// Reproduction: P/pythons holds staged 3.11 and 3.12 trees, VIS_PYTHON_STAGED_DIR=P/pythons. A 3.11
// session on P writes P/pythons/3.12/.../site-packages/zz.pth with a plain open() inside the jail, and
// zz2.pth with the host's own `write` tool: both land. The next `vis python` on 3.12 (run here with
// VIS_PYTHON_VERSION=3.12) runs the planted `.pth` on the host, unconfined, as the user: it writes a
// marker outside every root. A fix: protect (bind read-only, refuse in the host tools, refuse as a root)
// every tree of the staged directory, the checkout and the per-user cache the resolver could pick, not
// only the one resolved so far in this process.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'

const repo = join(import.meta.dirname, '..', '..')
const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test('a session cannot plant a .pth in another staged minor that the host runs later', async () => {
  for (const m of ['3.11', '3.12'])
    assert.ok(
      existsSync(join(repo, 'cpython-dist', m)),
      `needs staged CPython ${m} (node bin/vis.js runtime stage --python ${m})`,
    )
  const base = mkdtempSync(join(tmpdir(), 'vis-attack-staged-minor-'))
  made.push(base)
  const home = join(base, 'home')
  const project = join(base, 'project')
  mkdirSync(home)
  mkdirSync(project)
  const staged = join(project, 'pythons')
  for (const m of ['3.11', '3.12'])
    cpSync(join(repo, 'cpython-dist', m), join(staged, m), { recursive: true, verbatimSymlinks: true })
  const saved = { home: process.env.VIS_HOME, staged: process.env.VIS_PYTHON_STAGED_DIR }
  process.env.VIS_HOME = home
  process.env.VIS_PYTHON_STAGED_DIR = staged
  const marker = join(base, 'ran-on-the-host')
  const sp = 'pythons/3.12/linux-x86_64-gnu/python/lib/python3.12/site-packages'
  const pth = `import os; open(${JSON.stringify(marker)}, 'w').write('unconfined')\n`
  const e = await createEngine({ home, pool: { size: 0 }, python: '3.11' })
  let out = ''
  try {
    const s = await e.createSession({ roots: [project] })
    const r = await e.runBlock(s.id, {
      code: [
        'for how in ("open", "write"):',
        '    try:',
        '        if how == "open":',
        `            open(${JSON.stringify(`${sp}/zz.pth`)}, "w").write(${JSON.stringify(pth)})`,
        '        else:',
        `            await write(${JSON.stringify(`${sp}/zz2.pth`)}, ${JSON.stringify(pth)})`,
        '        print(how, "landed")',
        '    except Exception as ex:',
        '        print(how, "refused", type(ex).__name__, ex)',
      ].join('\n'),
    })
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    out = r.block.stdout ?? ''
  } finally {
    await e.close()
    if (saved.home === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved.home
    if (saved.staged === undefined) delete process.env.VIS_PYTHON_STAGED_DIR
    else process.env.VIS_PYTHON_STAGED_DIR = saved.staged
  }
  // The person's next `vis python` on the other staged minor.
  const p = spawnSync(process.execPath, [join(repo, 'bin', 'vis.js'), 'python', '-c', 'print("hi")'], {
    env: { ...process.env, VIS_HOME: home, VIS_PYTHON_STAGED_DIR: staged, VIS_PYTHON_VERSION: '3.12' },
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(p.status, 0, p.stderr)
  assert.ok(
    !existsSync(marker),
    `a 3.11 session wrote into the staged 3.12 tree (${out.trim().replace(/\n/g, '; ')}), and \`vis python\` on ` +
      '3.12 ran the planted .pth on the host, outside every jail (it wrote a file outside every root)',
  )
})
