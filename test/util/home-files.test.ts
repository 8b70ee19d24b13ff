// The vis home's own files judged where they really are (src/util/home-files.ts; seventeenth
// outsider pass): a config file or extension entry linked into a session root is refused with a
// code naming it, one linked elsewhere or kept in the home works as before. A HARD link of a
// root's file (eighteenth outsider pass) is refused too: a file with more than one name on a
// root's device, whichever of the home's files it is.
import assert from 'node:assert/strict'
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import { loadMcpConfig } from '../../src/engine/mcp-config.js'
import { discoverExtensions } from '../../src/extensions/discover.js'
import { projectTrust } from '../../src/extensions/trust.js'
import { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { tempDir } from '../distribution/helpers.js'

const base = realpathSync(tempDir('vis-home-files-'))
after(() => rmSync(base, { recursive: true, force: true }))

// A root this process's sessions opened (root-guard.ts notes each one the same way).
const root = join(base, 'root')
mkdirSync(root, { recursive: true })
noteSessionRoot(root)
const elsewhere = join(base, 'dotfiles')
mkdirSync(elsewhere, { recursive: true })

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn()
    return undefined
  } catch (err) {
    return err instanceof VisError ? err.code : `not a VisError: ${String(err)}`
  }
}

const server = { servers: { notes: { command: '/bin/true' } } }

test('mcp.json linked into a session root is refused, naming the file; linked elsewhere or real, it loads', () => {
  const home = join(base, 'h-mcp')
  mkdirSync(home)
  writeFileSync(join(root, 'mcp.json'), JSON.stringify(server))
  symlinkSync(join(root, 'mcp.json'), join(home, 'mcp.json'))
  try {
    loadMcpConfig(home)
    assert.fail('loaded an mcp.json a sandbox can write')
  } catch (err) {
    assert.ok(err instanceof VisError && err.code === 'home.file-writable', String(err))
    assert.match(err.message, /mcp\.json/)
    assert.match(err.message, new RegExp(root))
  }
  rmSync(join(home, 'mcp.json'))
  writeFileSync(join(elsewhere, 'mcp.json'), JSON.stringify(server))
  symlinkSync(join(elsewhere, 'mcp.json'), join(home, 'mcp.json'))
  assert.deepEqual(Object.keys(loadMcpConfig(home).servers), ['notes'])
  rmSync(join(home, 'mcp.json'))
  writeFileSync(join(home, 'mcp.json'), JSON.stringify(server))
  assert.deepEqual(Object.keys(loadMcpConfig(home).servers), ['notes'])
})

test('a link on the way counts: a chain through a link inside the root is refused even when it ends outside', () => {
  const home = join(base, 'h-chain')
  mkdirSync(home)
  writeFileSync(join(elsewhere, 'chain.json'), JSON.stringify(server))
  symlinkSync(join(elsewhere, 'chain.json'), join(root, 'hop.json'))
  symlinkSync(join(root, 'hop.json'), join(home, 'mcp.json'))
  assert.equal(
    codeOf(() => loadMcpConfig(home)),
    'home.file-writable',
  )
})

test('agent.json linked into a session root is refused', () => {
  const home = join(base, 'h-agent')
  mkdirSync(home)
  writeFileSync(join(root, 'agent.json'), '{}')
  symlinkSync(join(root, 'agent.json'), join(home, 'agent.json'))
  assert.equal(
    codeOf(() => loadAgentConfig({ home })),
    'home.file-writable',
  )
})

test('trust/ linked into a session root trusts nothing and says why', () => {
  const home = join(base, 'h-trust')
  const project = join(base, 'proj-trust')
  const exts = join(project, '.vis', 'extensions')
  mkdirSync(home)
  mkdirSync(exts, { recursive: true })
  writeFileSync(join(exts, 'x.py'), 'x = 1\n')
  mkdirSync(join(root, 'trust'))
  writeFileSync(join(root, 'trust', 'projects.json'), '{"version": 1, "projects": {}}')
  symlinkSync(join(root, 'trust'), join(home, 'trust'))
  const t = projectTrust(home, project, exts)
  assert.equal(t.state, 'unreadable')
  assert.match(t.state === 'unreadable' ? t.reason : '', /projects\.json.*sandbox can write/)
})

test('an extension file or package linked into a session root is not discovered, and says why; one linked elsewhere is', () => {
  const home = join(base, 'h-ext')
  const dir = join(home, 'extensions')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(root, 'inroot_ext.py'), 'x = 1\n')
  symlinkSync(join(root, 'inroot_ext.py'), join(dir, 'inroot_ext.py'))
  mkdirSync(join(root, 'pkg'))
  writeFileSync(join(root, 'pkg', 'extension.py'), 'x = 1\n')
  symlinkSync(join(root, 'pkg'), join(dir, 'pkg'))
  // A package outside every root, one of whose helpers is a link into the root.
  mkdirSync(join(elsewhere, 'mixed'))
  writeFileSync(join(elsewhere, 'mixed', 'extension.py'), 'x = 1\n')
  writeFileSync(join(root, 'helper.py'), 'y = 2\n')
  symlinkSync(join(root, 'helper.py'), join(elsewhere, 'mixed', 'helper.py'))
  symlinkSync(join(elsewhere, 'mixed'), join(dir, 'mixed'))
  writeFileSync(join(elsewhere, 'fine_ext.py'), 'x = 1\n')
  symlinkSync(join(elsewhere, 'fine_ext.py'), join(dir, 'fine_ext.py'))
  writeFileSync(join(dir, 'own_ext.py'), 'x = 1\n')
  const d = discoverExtensions({ home })
  assert.deepEqual(d.sources.map((s) => s.key).sort(), ['fine_ext', 'own_ext'])
  assert.deepEqual(d.refused.map((r) => r.key).sort(), ['inroot_ext', 'mixed', 'pkg'])
  for (const r of d.refused) assert.match(r.reason, new RegExp(`${root}.*sandbox can write`))
})

test("a home inside a session root (masked in every jail) keeps its own files; its outbox is still the sandbox's", () => {
  const home = join(root, 'h-inside')
  mkdirSync(join(home, 'outbox', 'w1'), { recursive: true })
  writeFileSync(join(home, 'mcp.json'), JSON.stringify(server))
  assert.deepEqual(Object.keys(loadMcpConfig(home).servers), ['notes'])
  rmSync(join(home, 'mcp.json'))
  writeFileSync(join(home, 'outbox', 'w1', 'mcp.json'), JSON.stringify(server))
  symlinkSync(join(home, 'outbox', 'w1', 'mcp.json'), join(home, 'mcp.json'))
  assert.equal(
    codeOf(() => loadMcpConfig(home)),
    'home.file-writable',
  )
  const dir = join(home, 'extensions')
  mkdirSync(dir)
  writeFileSync(join(dir, 'own_ext.py'), 'x = 1\n')
  const d = discoverExtensions({ home })
  assert.deepEqual(
    d.sources.map((s) => s.key),
    ['own_ext'],
  )
  assert.deepEqual(d.refused, [])
})

// `ln ROOT/file HOME/file`: one inode under two names, its real path in the home. Each of the
// home's files is refused while it has another name on the root's device; made a copy again
// (one name), it loads as before.
const hardLinked = (home: string, name: string, text: string): string => {
  const inRoot = join(root, `${home.split('/').pop()}-${name.replaceAll('/', '-')}`)
  writeFileSync(inRoot, text)
  mkdirSync(join(home, name, '..'), { recursive: true })
  linkSync(inRoot, join(home, name))
  return inRoot
}
// The root's name removed: the home's file has one name again.
const unlinked = (inRoot: string): void => rmSync(inRoot)

test('mcp.json hard-linked to a file in a session root is refused, naming the root; with one name it loads', () => {
  const home = join(base, 'h-mcp-hard')
  mkdirSync(home)
  const other = hardLinked(home, 'mcp.json', JSON.stringify(server))
  try {
    loadMcpConfig(home)
    assert.fail('loaded an mcp.json hard-linked to a file a sandbox can write')
  } catch (err) {
    assert.ok(err instanceof VisError && err.code === 'home.file-writable', String(err))
    assert.match(err.message, /mcp\.json.*2 names \(hard links\)/)
    assert.match(err.message, new RegExp(`${root}.*sandbox can write`))
  }
  unlinked(other)
  assert.deepEqual(Object.keys(loadMcpConfig(home).servers), ['notes'])
})

test('agent.json hard-linked to a file in a session root is refused; with one name it loads', () => {
  const home = join(base, 'h-agent-hard')
  mkdirSync(home)
  const other = hardLinked(home, 'agent.json', '{}')
  assert.equal(
    codeOf(() => loadAgentConfig({ home })),
    'home.file-writable',
  )
  unlinked(other)
  assert.equal(
    codeOf(() => loadAgentConfig({ home })),
    undefined,
  )
})

test('trust/projects.json hard-linked to a file in a session root trusts nothing and says why', () => {
  const home = join(base, 'h-trust-hard')
  const project = join(base, 'proj-trust-hard')
  const exts = join(project, '.vis', 'extensions')
  mkdirSync(home)
  mkdirSync(exts, { recursive: true })
  writeFileSync(join(exts, 'x.py'), 'x = 1\n')
  const other = hardLinked(home, 'trust/projects.json', '{"version": 1, "projects": {}}')
  const t = projectTrust(home, project, exts)
  assert.equal(t.state, 'unreadable')
  assert.match(t.state === 'unreadable' ? t.reason : '', /projects\.json.*hard links.*sandbox can write/)
  unlinked(other)
  assert.notEqual(projectTrust(home, project, exts).state, 'unreadable')
})

test('an extension file, or a file inside a package, hard-linked to a file in a session root is not discovered', () => {
  const home = join(base, 'h-ext-hard')
  const dir = join(home, 'extensions')
  mkdirSync(dir, { recursive: true })
  const file = hardLinked(home, 'extensions/hard_ext.py', 'x = 1\n')
  mkdirSync(join(dir, 'pkg'))
  writeFileSync(join(dir, 'pkg', 'extension.py'), 'x = 1\n')
  const helper = hardLinked(home, 'extensions/pkg/helper.py', 'y = 2\n')
  writeFileSync(join(dir, 'own_ext.py'), 'x = 1\n')
  const d = discoverExtensions({ home })
  assert.deepEqual(
    d.sources.map((s) => s.key),
    ['own_ext'],
  )
  assert.deepEqual(d.refused.map((r) => r.key).sort(), ['hard_ext', 'pkg'])
  for (const r of d.refused) assert.match(r.reason, new RegExp(`hard links.*${root}.*sandbox can write`))
  unlinked(file)
  unlinked(helper)
  const again = discoverExtensions({ home })
  assert.deepEqual(again.sources.map((s) => s.key).sort(), ['hard_ext', 'own_ext', 'pkg'])
  assert.deepEqual(again.refused, [])
})
