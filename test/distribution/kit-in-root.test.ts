// A file:// VIS_PYTHON_DIST_URL kit (src/distribution/local-source.ts): one outside every session root
// installs; one inside a root a sandbox can write is refused with dist.source-in-root naming the kit and
// what to do, and nothing is installed; a kit file swapped for a link into a root between the check and
// the read is refused by where the opened file lies (a test-only hook makes the swap land there every
// time). Real files, the real small release and the real resolver.
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { localSourceTestHooks } from '../../src/distribution/local-source.js'
import { resolveDistribution } from '../../src/distribution/resolve.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { type Fixtures, fixtures, MINOR, PLATFORM, tempDir } from './helpers.js'

let f: Fixtures
const scratch: string[] = []
before(async () => {
  f = await fixtures()
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

// A copy of the small release at `dir` (made here), and a fresh home for the cache.
function kit(dir = tempDir('vis-kit-')): { dir: string; env: NodeJS.ProcessEnv } {
  mkdirSync(dir, { recursive: true })
  cpSync(f.release, dir, { recursive: true })
  const home = tempDir('vis-kit-home-')
  process.env.VIS_HOME = home
  scratch.push(dir, home)
  return { dir, env: { VIS_HOME: home, VIS_PYTHON_DIST_URL: `file://${dir}`, VIS_DOWNLOAD_RETRIES: '0' } }
}

const opts = (env: NodeJS.ProcessEnv) => ({ minor: MINOR, env, stagedDir: join(env.VIS_HOME!, 'no-staged') })

function cached(env: NodeJS.ProcessEnv): string[] {
  try {
    return readdirSync(join(env.VIS_HOME!, 'python', 'runtime', MINOR, PLATFORM))
  } catch {
    return []
  }
}

function refused(dir: string) {
  return (err: Error & { code?: string; context?: Record<string, unknown> }) => {
    assert.equal(err.code, 'dist.source-in-root', err.message)
    assert.match(err.message, /lies inside .*a root a session of this or another vis process can write/)
    assert.match(err.message, /Move the kit outside every session root/)
    assert.ok(String(err.context?.path).startsWith(dir), JSON.stringify(err.context))
    return true
  }
}

test('a kit outside every root installs into the cache', async () => {
  const k = kit()
  const dist = await resolveDistribution(opts(k.env))
  assert.equal(dist.source, 'download')
})

test("a kit inside a session's root is refused before anything is read, and nothing is installed", async () => {
  const root = realpathSync(tempDir('vis-kit-root-'))
  scratch.push(root)
  const k = kit(join(root, 'kit', 'cpython'))
  noteSessionRoot(root)
  await assert.rejects(resolveDistribution(opts(k.env)), refused(k.dir))
  assert.deepEqual(cached(k.env), [])
})

test('a kit file swapped for a link into a root between the check and the read is refused', async () => {
  const root = realpathSync(tempDir('vis-kit-swap-root-'))
  scratch.push(root)
  noteSessionRoot(root)
  const k = kit()
  // The sandbox's archive (here: the same bytes, which is beside the point: where it lies decides).
  const planted = join(root, f.small.file)
  cpSync(join(k.dir, f.small.file), planted)
  let swapped = 0
  localSourceTestHooks.beforeOpen = (path) => {
    if (!path.endsWith('.tar.gz')) return
    rmSync(path)
    symlinkSync(planted, path)
    swapped++
  }
  try {
    await assert.rejects(resolveDistribution(opts(k.env)), refused(k.dir))
  } finally {
    localSourceTestHooks.beforeOpen = undefined
  }
  assert.equal(swapped, 1, 'the swap landed between the check and the open')
  assert.deepEqual(cached(k.env), [])
})
