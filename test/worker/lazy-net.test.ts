// The worker's control side (the policy and wire schemas, the egress relay's module) never
// loads node:net to validate rules or judge addresses (ip.ts parses them to bytes), so a worker
// with the network off never pays for it at start. Checked in a plain Node process, by the
// builtins it has loaded.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../../src/util/home.js'

// Inside the package, so the bundle finds zod in node_modules as a worker's code does.
mkdirSync(join(packageRoot, '.cache'), { recursive: true })
const dir = mkdtempSync(join(packageRoot, '.cache', 'test-lazy-net-'))
let out: Record<string, unknown>

before(async () => {
  // Not under tsx, which loads node:net itself: the probe bundled as a worker's code would be.
  const esbuild = await import('esbuild')
  const file = join(dir, 'probe.mjs')
  await esbuild.build({
    entryPoints: [fileURLToPath(new URL('./fixtures/lazy-net-probe.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: file,
    logLevel: 'silent',
  })
  const r = spawnSync(process.execPath, [file], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  assert.equal(r.status, 0, r.stderr)
  out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}')
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('network off: a worker policy and a network request validate without loading node:net', () => {
  assert.deepEqual(out.networkOff, { enabled: false, loaded: false })
})

test('rules and addresses are judged on bytes (ip.ts) without node:net, as before', () => {
  assert.deepEqual(out.allow, ['10.0.0.0/8', 'example.com'])
  assert.equal(out.afterRules, false)
  assert.deepEqual(out.metadata, { floor: 'never', label: 'link-local (cloud metadata)' })
  assert.deepEqual(out.mapped, { floor: 'private', label: 'private (RFC 1918)' })
  assert.deepEqual(out.public, { floor: 'public' })
  assert.equal(out.badPrefix, 'ZodError')
})
