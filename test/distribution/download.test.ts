import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { fetchIntoCache } from '../../src/distribution/fetch.js'
import { cacheRoot, treePaths } from '../../src/distribution/layout.js'
import { readDistManifest } from '../../src/distribution/manifest.js'
import { resolveDistribution } from '../../src/distribution/resolve.js'
import { cleanPythonEnv } from '../../src/distribution/tools.js'
import {
  cliEnv,
  closedPort,
  type Fixtures,
  fixtures,
  listDir,
  MINOR,
  type ReleaseServer,
  runCli,
  spawnCli,
  startReleaseServer,
  tempDir,
} from './helpers.js'

let f: Fixtures
let server: ReleaseServer
let emptyStaged: string
const scratch: string[] = []

before(async () => {
  f = await fixtures()
  server = await startReleaseServer(f.release, f.small)
  emptyStaged = tempDir()
  scratch.push(emptyStaged)
})
after(async () => {
  await server.close()
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

// Each test gets a fresh VIS_HOME, so the cache starts empty.
let home: string
beforeEach(() => {
  home = tempDir('vis-dist-home-')
  scratch.push(home)
  process.env.VIS_HOME = home
})

// Resolution with nothing local: no env, an empty staged dir, no checkout.
function opts(mode: string, extra: Record<string, string> = {}) {
  return {
    minor: MINOR,
    retries: 0,
    env: { VIS_PYTHON_STAGED_DIR: emptyStaged, VIS_PYTHON_DIST_URL: server.url(mode), ...extra },
  }
}

// The cache's platform dir must hold the installed tree or nothing: no
// temp dirs, no half trees.
function cacheEntries(): string[] {
  return listDir(dirname(cacheRoot(MINOR)))
}

describe('download into the per-user cache', () => {
  test('fetches, checks, unpacks and renames in; the tree runs; the next resolve is offline', async () => {
    const events: string[] = []
    const dist = await resolveDistribution({ ...opts('ok'), onProgress: (e) => events.push(e.step) })
    assert.equal(dist.source, 'download')
    assert.equal(dist.root, cacheRoot(MINOR))
    assert.equal(dist.root.startsWith(home), true)
    assert.equal(dist.version, f.staged.version)
    assert.equal(dist.libpython, join(dist.root, 'lib', `libpython${MINOR}.so.1.0`))
    assert.ok(events.includes('download') && events.includes('unpack'))
    assert.deepEqual(cacheEntries(), ['python'])
    const m = readDistManifest(join(dist.root, 'vis-dist.json'))
    assert.equal(m.sha256, f.small.sha256)
    assert.match(m.source, /^download:http:\/\/127\.0\.0\.1:\d+\/ok\/cpython-/)
    const out = execFileSync(
      treePaths(dist.root, MINOR).executable,
      ['-I', '-B', '-c', 'import json, sys; print(json.dumps(sys.prefix))'],
      { env: cleanPythonEnv(), encoding: 'utf8' },
    )
    assert.equal(JSON.parse(out), dist.root)

    // Now the cache answers, even with the server unreachable.
    const port = await closedPort()
    const again = await resolveDistribution({
      minor: MINOR,
      retries: 0,
      env: { VIS_PYTHON_STAGED_DIR: emptyStaged, VIS_PYTHON_DIST_URL: `http://127.0.0.1:${port}` },
    })
    assert.equal(again.source, 'cache')
    assert.equal(again.root, dist.root)
  })

  test('a checksum mismatch names the URL and both hashes and leaves nothing', async () => {
    await assert.rejects(resolveDistribution(opts('badsha')), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'dist.checksum')
      assert.match(err.message, new RegExp(`${server.url('badsha')}/${f.small.file.replace(/\./g, '\\.')}`))
      assert.match(err.message, new RegExp(`cpython-3\\.11-\\S+\\.json says sha256 ${'f'.repeat(64)}`))
      assert.match(err.message, new RegExp(`the file has ${f.small.sha256}`))
      assert.match(err.message, /publish them again together .*then run `vis runtime fetch` again/)
      return true
    })
    assert.deepEqual(cacheEntries(), [])
  })

  test('a truncated archive (whose manifest matches it) fails in tar, naming the URL', async () => {
    await assert.rejects(resolveDistribution(opts('truncated')), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'dist.archive')
      assert.match(
        err.message,
        /the archive http:\/\/127\.0\.0\.1:\d+\/truncated\/\S+ is corrupt or truncated .*download or stage it again/,
      )
      return true
    })
    assert.deepEqual(cacheEntries(), [])
  })

  test('a connection dropped mid-archive is one error naming the URL', async () => {
    await assert.rejects(
      fetchIntoCache(MINOR, server.url('cut'), { retries: 0 }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'dist.download')
        assert.match(err.message, /could not download http:\/\/127\.0\.0\.1:\d+\/cut\/cpython-/)
        return true
      },
    )
    assert.deepEqual(cacheEntries(), [])
  })

  test('a 404 for the manifest says what to do: VIS_PYTHON_HOME or the stage command', async () => {
    await assert.rejects(resolveDistribution(opts('nothing-here')), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'dist.not-found')
      assert.match(err.message, /HTTP 404/)
      assert.match(err.message, /\/nothing-here\/cpython-3\.11-linux-x86_64-gnu\.json/)
      assert.match(err.message, /VIS_PYTHON_HOME/)
      assert.match(err.message, /vis runtime stage --python 3\.11/)
      return true
    })
    assert.deepEqual(cacheEntries(), [])
  })

  test('a 404 for the archive names the archive URL', async () => {
    await assert.rejects(resolveDistribution(opts('noarchive')), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'dist.not-found')
      assert.match(err.message, /\/noarchive\/cpython-[\d.]+-linux-x86_64-gnu\.tar\.gz: HTTP 404/)
      return true
    })
    assert.deepEqual(cacheEntries(), [])
  })

  test('a refused connection with nothing staged names VIS_PYTHON_HOME and the stage command', async () => {
    const port = await closedPort()
    const base = `http://127.0.0.1:${port}/releases`
    await assert.rejects(
      resolveDistribution({
        ...opts('ok'),
        env: { VIS_PYTHON_STAGED_DIR: emptyStaged, VIS_PYTHON_DIST_URL: base },
      }),
      (err: Error & { code?: string; context?: { url?: string } }) => {
        assert.equal(err.code, 'dist.not-found')
        assert.match(err.message, /ECONNREFUSED/)
        assert.ok(err.message.includes(`${base}/cpython-3.11-linux-x86_64-gnu.json`))
        assert.match(err.message, /Set VIS_PYTHON_HOME/)
        assert.match(err.message, /vis runtime stage --python 3\.11/)
        assert.ok(err.context?.url?.startsWith(base))
        return true
      },
    )
    assert.deepEqual(cacheEntries(), [])
  })

  test('allowDownload: false never touches the network', async () => {
    const before = server.hits.length
    await assert.rejects(resolveDistribution({ ...opts('ok'), allowDownload: false }), {
      code: 'dist.not-found',
    })
    assert.equal(server.hits.length, before)
  })
})

describe('download from several processes', () => {
  test('two processes fetching at once both succeed with one complete install', async () => {
    const env = cliEnv({
      VIS_HOME: home,
      VIS_PYTHON_STAGED_DIR: emptyStaged,
      VIS_PYTHON_DIST_URL: server.url('ok'),
    })
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawnCli(['runtime', 'fetch', '--python', MINOR], env)
        let out = ''
        child.stdout.on('data', (d) => {
          out += d
        })
        child.stderr.on('data', (d) => {
          out += d
        })
        child.on('exit', (code) => resolve({ code, out }))
      })
    const [a, b] = await Promise.all([run(), run()])
    assert.equal(a.code, 0, a.out)
    assert.equal(b.code, 0, b.out)
    const root = cacheRoot(MINOR)
    assert.ok(a.out.includes(root) && b.out.includes(root))
    assert.deepEqual(cacheEntries(), ['python'])
    const m = readDistManifest(join(root, 'vis-dist.json'))
    assert.equal(m.sha256, f.small.sha256)
    assert.ok(existsSync(join(root, 'lib', 'python3.11', 'os.py')))

    // Present: fetch does nothing; --force downloads and replaces it.
    const hits = server.hits.length
    const again = await runCli(['runtime', 'fetch', '--python', MINOR], env)
    assert.equal(again.status, 0, again.stderr)
    assert.match(again.stdout, /is already in the cache/)
    assert.equal(server.hits.length, hits)
    const forced = await runCli(['runtime', 'fetch', '--python', MINOR, '--force'], env)
    assert.equal(forced.status, 0, forced.stderr)
    assert.equal(server.hits.length, hits + 2)
    assert.deepEqual(cacheEntries(), ['python'])
  })

  async function killWhen(ready: (partial: string) => boolean, mode: string): Promise<string> {
    const env = cliEnv({
      VIS_HOME: home,
      VIS_PYTHON_STAGED_DIR: emptyStaged,
      VIS_PYTHON_DIST_URL: server.url(mode),
    })
    const child = spawnCli(['runtime', 'fetch', '--python', MINOR], env)
    const exited = new Promise((r) => child.on('exit', r))
    const parent = dirname(cacheRoot(MINOR))
    let seen = ''
    for (let i = 0; i < 6000 && !seen; i++) {
      const partial = listDir(parent).find((n) => n.startsWith('.python.partial-'))
      if (partial && ready(join(parent, partial))) seen = partial
      else await new Promise((r) => setTimeout(r, 5))
    }
    process.kill(-child.pid!, 'SIGKILL')
    await exited
    assert.ok(seen, 'the fetch never reached the point to kill it at')
    return seen
  }

  test('a kill mid-download leaves nothing at the final path; the next run cleans up and succeeds', async () => {
    const partial = await killWhen((dir) => {
      const file = join(dir, f.small.file)
      return existsSync(file) && statSync(file).size > 256 * 1024
    }, 'slow')
    assert.equal(existsSync(cacheRoot(MINOR)), false)
    assert.ok(cacheEntries().includes(partial), 'the stale temp dir is still there to be cleaned')
    const r = await runCli(
      ['runtime', 'fetch', '--python', MINOR],
      cliEnv({ VIS_HOME: home, VIS_PYTHON_STAGED_DIR: emptyStaged, VIS_PYTHON_DIST_URL: server.url('ok') }),
    )
    assert.equal(r.status, 0, r.stderr)
    assert.deepEqual(cacheEntries(), ['python'])
  })

  test('a kill mid-unpack leaves nothing at the final path', async () => {
    const partial = await killWhen((dir) => existsSync(join(dir, 'tree')), 'ok')
    assert.equal(existsSync(cacheRoot(MINOR)), false)
    assert.ok(cacheEntries().includes(partial))
    // What was killed: a tree being unpacked, not yet marked as ours.
    const tree = join(dirname(cacheRoot(MINOR)), partial, 'tree')
    assert.ok(existsSync(tree))
    // tar writes vis-dist.json last (names are sorted); it never got there.
    assert.equal(existsSync(join(tree, 'python', 'vis-dist.json')), false)
    const dist = await resolveDistribution(opts('ok'))
    assert.equal(dist.source, 'download')
    assert.deepEqual(cacheEntries(), ['python'])
  })
})
