// ATTACK (issue 30, fourth pass: "the unconfined layout.py parse of pyproject/setup.cfg follows
// links"): when a session starts, the host reads each root's pyproject.toml / setup.cfg /
// pytest.ini / tox.ini with an unconfined interpreter (vis_ext/layout.py) to seed the
// sandbox's sys.path. A block writes its root, so it can plant `pyproject.toml -> <host file>`
// (the host then parses a file outside every root, and what it declares reaches the next
// session's sys.path) or declare `src` and make `src` a link out of the root (a host directory
// then goes onto sys.path as an import root). Either leaks what the host sees outside the roots.
// Now the host reads the files itself beneath the root's fd (no link, no FIFO, bounded) and hands
// the parser their text; only directories whose real path lies inside the root go onto sys.path.
// The controls (a regular pyproject.toml, a real src/) still seed sys.path.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { readDeclaredLayout } from '../../src/project/declared.js'

const python = process.env.VIS_PYTHON_VERSION
let engine: Engine
const made: string[] = []
const dir = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), `vis-attack-layout-${p}-`))
  made.push(d)
  return d
}

before(async () => {
  engine = await createEngine({ home: dir('home'), python, pool: { size: 0 }, extensions: false })
})
after(async () => {
  await engine?.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

async function block(root: string, code: string): Promise<string> {
  const s = await engine.createSession({ roots: [root] })
  try {
    const { block: b } = await engine.runBlock(s.id, { code, timeout_ms: 60_000 })
    assert.equal(b.error, null, JSON.stringify(b.error))
    return b.stdout
  } finally {
    await engine.closeSession(s.id)
  }
}
const sysPath = async (root: string): Promise<string[]> =>
  JSON.parse((await block(root, 'import json, sys\nprint(json.dumps(sys.path))')).trim().split('\n').pop()!)

test('a pyproject.toml linked to a host file is not parsed: what it declares never reaches sys.path', async () => {
  const host = dir('host')
  const hostToml = join(host, 'pyproject.toml')
  writeFileSync(hostToml, '[tool.setuptools.packages.find]\nwhere = ["leaked_by_host_file"]\n')
  const root = dir('root')
  // The block plants the link and the directory the host file names (a symlink needs no access
  // to its target).
  const out = await block(
    root,
    `import os\nos.symlink(${JSON.stringify(hostToml)}, 'pyproject.toml')\nos.mkdir('leaked_by_host_file')\nprint('planted')`,
  )
  assert.match(out, /planted/)
  const path = await sysPath(root)
  assert.ok(
    !path.includes(join(root, 'leaked_by_host_file')),
    `the host file outside the root was parsed: its declaration is on sys.path ${JSON.stringify(path)}`,
  )
  const d = await readDeclaredLayout(root, { python })
  assert.deepEqual(d.entries, [])
  assert.match(
    d.warnings.map((w) => `${w.file}: ${w.message}`).join('\n'),
    /pyproject\.toml: not read: a symbolic link/,
  )
})

test('a declared src that is a link out of the root never goes onto sys.path; a real one does', async () => {
  const host = dir('hostlib')
  writeFileSync(join(host, 'hostmod.py'), 'SECRET = 1\n')
  const root = dir('root')
  writeFileSync(join(root, 'pyproject.toml'), '[tool.setuptools.packages.find]\nwhere = ["src", "lib"]\n')
  mkdirSync(join(root, 'lib'))
  await block(root, `import os\nos.symlink(${JSON.stringify(host)}, 'src')\nprint('planted')`)
  const path = await sysPath(root)
  assert.ok(
    !path.includes(join(root, 'src')),
    `a link out of the root is on sys.path: ${JSON.stringify(path)}`,
  )
  // The control: the same file's real directory is an import root, the root itself after it.
  assert.ok(path.includes(join(root, 'lib')), JSON.stringify(path))
  assert.ok(path.indexOf(join(root, 'lib')) < path.indexOf(root), JSON.stringify(path))
})

// Not an open hole before (layout.py's isfile() skipped a FIFO, silently, with a race between the
// check and its open): the host now reads with O_NONBLOCK through the fd and says why it skipped.
test('a FIFO named pyproject.toml is skipped with a warning, never opened for a blocking read', async () => {
  const root = dir('root')
  await block(root, `import os\nos.mkfifo('pyproject.toml')\nprint('planted')`)
  const d = await readDeclaredLayout(root, { python })
  assert.deepEqual(d.entries, [])
  assert.match(d.warnings.map((w) => w.message).join('\n'), /not read: not a regular file/)
})
