// The frameworks are optional peers: the package as packed (`npm pack`), installed in a project
// that has its dependencies but none of ai, @openai/agents or @langchain/core, imports as
// `vis-runtime`; each adapter's subpath then fails naming the package to install, and works
// once that one package is there. Needs `npm run build` (the tarball carries dist/).
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { before, test } from 'node:test'
import * as tar from 'tar'
import { repoRoot, runCollected, tempDir } from '../distribution/helpers.js'

const PEERS = { 'ai-sdk': 'ai', 'openai-agents': '@openai/agents', langchain: '@langchain/core' } as const
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}

let work: string
let tarball: string

// A project with the packed package and its dependencies (linked from this checkout), plus `extra`.
function project(name: string, extra: string[] = []): string {
  const dir = join(work, name)
  const nm = join(dir, 'node_modules')
  mkdirSync(join(nm, 'vis-runtime'), { recursive: true })
  tar.x({ file: tarball, cwd: join(nm, 'vis-runtime'), strip: 1, sync: true })
  for (const dep of [...Object.keys(pkg.dependencies), ...extra]) {
    if (dep.includes('/')) mkdirSync(join(nm, dep.split('/')[0]!), { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules', dep), join(nm, dep))
  }
  return dir
}

// One ESM script in the project: what each import gave, as JSON.
async function probe(dir: string, specifiers: string[]): Promise<Record<string, unknown>> {
  const script = `
const out = {}
for (const s of ${JSON.stringify(specifiers)}) {
  try {
    const m = await import(s)
    out[s] = { ok: true, exports: Object.keys(m).sort() }
  } catch (e) {
    out[s] = { ok: false, name: e.name, code: e.code, message: e.message }
  }
}
console.log(JSON.stringify(out))
`
  const r = await runCollected(process.execPath, ['--input-type=module', '-e', script], { cwd: dir })
  assert.equal(r.status, 0, r.out)
  return JSON.parse(r.out.trim().split('\n').at(-1)!)
}

before(async () => {
  work = tempDir('vis-adapter-peers-')
  const r = await runCollected(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', work, '--cache', join(work, '.npm')],
    { cwd: repoRoot },
  )
  assert.equal(r.status, 0, r.out)
  const [packed] = JSON.parse(r.out.slice(r.out.indexOf('['))) as { filename: string }[]
  assert.ok(packed, r.out)
  tarball = join(work, packed.filename)
})

test('package.json declares each framework as an optional peer, never as a dependency', () => {
  for (const peer of Object.values(PEERS)) {
    assert.ok(pkg.peerDependencies[peer], `${peer} is a peer`)
    assert.equal(pkg.peerDependenciesMeta[peer]?.optional, true, `${peer} is optional`)
    assert.equal(pkg.dependencies[peer], undefined, `${peer} is not installed for everyone`)
  }
})

test('from the tarball, with no framework installed: vis-runtime imports, each adapter names its peer', {
  timeout: 180_000,
}, async () => {
  const dir = project('bare')
  const req = createRequire(join(dir, 'index.js'))
  for (const peer of Object.values(PEERS))
    assert.throws(() => req.resolve(peer), /Cannot find module/, `${peer} is out of the project's reach`)
  const subpaths = Object.keys(PEERS).map((s) => `vis-runtime/${s}`)
  const got = await probe(dir, ['vis-runtime', ...subpaths])
  const main = got['vis-runtime'] as { ok: boolean; exports: string[] }
  assert.equal(main.ok, true, JSON.stringify(main))
  assert.ok(main.exports.includes('createRuntime') && main.exports.includes('createEngine'))
  for (const [sub, peer] of Object.entries(PEERS)) {
    const r = got[`vis-runtime/${sub}`] as { ok: boolean; name: string; code: string; message: string }
    assert.equal(r.ok, false, `vis-runtime/${sub} without ${peer}`)
    assert.equal(r.name, 'VisError')
    assert.equal(r.code, 'adapter.peer-missing')
    assert.match(r.message, new RegExp(`^vis-runtime/${sub} needs the package ${peer} \\(`))
    assert.ok(r.message.includes(`npm install ${peer}@`), r.message)
  }
})

test('from the tarball, with one framework installed: its adapter loads, the others still name theirs', {
  timeout: 180_000,
}, async () => {
  for (const [sub, peer] of Object.entries(PEERS)) {
    const dir = project(`with-${sub}`, [peer])
    const got = await probe(
      dir,
      Object.keys(PEERS).map((s) => `vis-runtime/${s}`),
    )
    for (const other of Object.keys(PEERS)) {
      const r = got[`vis-runtime/${other}`] as { ok: boolean; exports?: string[]; code?: string }
      if (other === sub) assert.deepEqual(r, { ok: true, exports: ['pythonTool'] }, `${sub} with ${peer}`)
      else assert.equal(r.code, 'adapter.peer-missing', `${other} with only ${peer}`)
    }
  }
})
