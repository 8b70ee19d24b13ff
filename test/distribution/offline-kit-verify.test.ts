// An offline kit checks itself with its own code (verify.mjs, the compiled verify-kit module,
// run by Node with nothing installed), on read-only media too, and tolerates exactly what npm
// writes into the kit's cache when it installs from it: made with real npm on a small kit (a
// packed package in the kit's own cache), then installed from, then tampered with. `npm run
// build` first (verify.mjs is dist/bundle/verify-kit.js).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { hashFiles } from '../../src/bundle/manifest.js'
import { KIT_VERIFIER, verifyKit } from '../../src/bundle/verify-kit.js'
import { repoRoot, tempDir } from './helpers.js'

type Run = { status: number | null; out: string }

function run(cmd: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k]
    const child = spawn(cmd, args, { cwd, env })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.on('close', (status) => resolve({ status, out }))
  })
}

// Every file of a directory, recursively, relative.
function files(dir: string, at = ''): string[] {
  return readdirSync(join(dir, at), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(dir, join(at, e.name)) : [join(at, e.name)],
  )
}

test('a kit verifies with its own verify.mjs, read-only too, and after npm installed from its cache', {
  timeout: 180_000,
}, async () => {
  const work = tempDir('vis-kit-')
  // The package the kit carries: small, with a dependency of its own, both packed.
  const src = join(work, 'src')
  for (const [name, deps] of [
    ['kit-dep', {}],
    ['kit-main', { 'kit-dep': 'file:../kit-dep' }],
  ] as const) {
    mkdirSync(join(src, name), { recursive: true })
    writeFileSync(
      join(src, name, 'package.json'),
      JSON.stringify({ name, version: '1.0.0', dependencies: deps }),
    )
    writeFileSync(join(src, name, 'index.js'), `module.exports = ${JSON.stringify(name)}\n`)
  }
  const kit = join(work, 'kit')
  mkdirSync(kit)
  const cache = join(kit, 'npm-cache')
  const offline = [
    '--offline',
    '--cache',
    cache,
    '--registry',
    'http://127.0.0.1:9/',
    '--no-audit',
    '--no-fund',
  ]
  for (const name of ['kit-dep', 'kit-main']) {
    const packed = await run('npm', ['pack', '--pack-destination', kit, ...offline], join(src, name))
    assert.equal(packed.status, 0, packed.out)
    const added = await run('npm', ['cache', 'add', join(kit, `${name}-1.0.0.tgz`), ...offline], kit)
    assert.equal(added.status, 0, added.out)
  }
  copyFileSync(join(repoRoot, 'dist', 'bundle', 'verify-kit.js'), join(kit, KIT_VERIFIER))
  const recorded = await hashFiles(kit)
  writeFileSync(join(kit, 'bundle.json'), JSON.stringify({ format: 1, files: recorded }))
  assert.ok(
    recorded.some((f) => f.entries?.length),
    'the index buckets are recorded with their keys',
  )

  // Before anything is installed: Node alone, from the kit, also where nothing can be written.
  const fresh = await run(process.execPath, [join(kit, KIT_VERIFIER)], work)
  assert.equal(fresh.status, 0, fresh.out)
  assert.match(fresh.out, new RegExp(`bundle ${kit}/?: ${recorded.length} files intact\\n$`))
  const script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && exec node "$1/verify.mjs"'
  const ro = await run('unshare', ['-m', 'sh', '-c', script, 'sh', kit], work)
  assert.equal(ro.status, 0, ro.out)
  assert.match(ro.out, /files intact/)

  // Install from the kit's own cache, as README.txt says: npm writes its log and index entries.
  const project = join(work, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), '{"name":"p","private":true}')
  const before = new Set(files(cache))
  const install = await run('npm', ['install', join(kit, 'kit-main-1.0.0.tgz'), ...offline], project)
  assert.equal(install.status, 0, install.out)
  const written = files(cache).filter((f) => !before.has(f))
  assert.ok(written.length > 0, 'npm wrote into the kit cache (the case being tested)')
  const after = await run(process.execPath, [join(kit, KIT_VERIFIER)], work)
  assert.equal(after.status, 0, after.out)
  assert.match(after.out, /files intact, \d+ written by npm \(allowed\)\n$/)
  const report = await verifyKit(kit, recorded)
  assert.deepEqual(report.problems, [])
  assert.ok(
    report.tolerated.some((t) => /^npm-cache\/_logs\/.+\.log: written by npm$/.test(t)),
    report.tolerated.join('\n'),
  )

  // Tampering is still found: a changed content file, an index entry sending a known key to
  // other content, and a stray file outside the cache.
  const content = recorded.find((f) => f.path.startsWith('npm-cache/_cacache/content-v2/'))
  assert.ok(content)
  appendFileSync(join(kit, content.path), 'x')
  const bucket = recorded.find((f) => f.entries?.length)
  assert.ok(bucket?.entries)
  const entry = { ...bucket.entries[0], integrity: 'sha512-AAAA', time: Date.now() }
  const json = JSON.stringify(entry)
  appendFileSync(join(kit, bucket.path), `\n${createHash('sha1').update(json).digest('hex')}\t${json}`)
  writeFileSync(join(kit, 'extra.sh'), 'echo hi\n')
  const bad = await run(process.execPath, [join(kit, KIT_VERIFIER)], work)
  assert.equal(bad.status, 1, bad.out)
  assert.ok(bad.out.includes(`BAD  ${content.path}: sha256 `), bad.out)
  assert.ok(
    bad.out.includes(`BAD  ${bucket.path}: rewritten: ${bucket.entries[0]?.key} now points at sha512-AAAA`),
    bad.out,
  )
  assert.match(bad.out, /BAD {2}extra\.sh: not in the manifest/)
  assert.match(bad.out, /^3 problems, /m)
})
