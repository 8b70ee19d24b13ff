// What goes wrong when installing, each as one clear error naming the file and what to do:
// a corrupted CPython archive, a manifest whose sha256 does not match, a runtime prebuild
// for the wrong Python minor; and the doctor summary naming what the machine lacks.
import assert from 'node:assert/strict'
import { copyFileSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { bundleArchive } from '../../src/bundle/bundle.js'
import { aptCommand, summaryLines } from '../../src/confinement/advice.js'
import { sha256File, unpackArchive } from '../../src/distribution/archive.js'
import { cacheRoot } from '../../src/distribution/layout.js'
import { resolveDistribution } from '../../src/distribution/resolve.js'
import { validateTree } from '../../src/distribution/validate.js'
import { addonFile, runtimeAddonPath } from '../../src/native/addon.js'
import { needs } from '../helpers/needs.js'
import { cliEnv, type Fixtures, fixtures, MINOR, PLATFORM, runCli, tempDir } from './helpers.js'

let f: Fixtures
const scratch: string[] = []
before(async () => {
  f = await fixtures()
})
after(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true })
})

// A private copy of the small release, published as a file:// mirror, and a fresh cache.
function mirror(): { dir: string; url: string; env: NodeJS.ProcessEnv; manifest: string; archive: string } {
  const dir = tempDir('vis-mirror-')
  cpSync(f.release, dir, { recursive: true })
  // The cache follows VIS_HOME (read from the process environment).
  const home = tempDir('vis-home-')
  process.env.VIS_HOME = home
  scratch.push(dir, home)
  return {
    dir,
    url: `file://${dir}`,
    env: { VIS_HOME: home, VIS_PYTHON_DIST_URL: `file://${dir}`, VIS_DOWNLOAD_RETRIES: '0' },
    manifest: join(dir, `cpython-${MINOR}-${PLATFORM}.json`),
    archive: join(dir, f.small.file),
  }
}

function cacheEntries(env: NodeJS.ProcessEnv): string[] {
  const dir = join(env.VIS_HOME!, 'python', 'runtime', MINOR, PLATFORM)
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

const opts = (env: NodeJS.ProcessEnv) => ({
  minor: MINOR,
  env,
  stagedDir: join(env.VIS_HOME!, 'no-staged'),
})

test('a file:// mirror installs into the cache (the offline path)', async () => {
  const m = mirror()
  const dist = await resolveDistribution(opts(m.env))
  assert.equal(dist.source, 'download')
  assert.equal(dist.manifest.source, `download:${m.url}/${f.small.file}`)
  assert.equal(dist.root, cacheRoot(MINOR))
})

test('a corrupted archive (its manifest updated to match) names the file and says to fetch or stage it again', async () => {
  const m = mirror()
  const bytes = readFileSync(m.archive)
  // Garbage in the middle of the gzip stream: the checksum passes, the unpack cannot.
  bytes.fill(0x5a, Math.floor(bytes.length / 3), Math.floor(bytes.length / 3) + 4096)
  writeFileSync(m.archive, bytes)
  const manifest = JSON.parse(readFileSync(m.manifest, 'utf8'))
  writeFileSync(m.manifest, JSON.stringify({ ...manifest, sha256: await sha256File(m.archive) }))
  await assert.rejects(resolveDistribution(opts(m.env)), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'dist.archive')
    assert.ok(
      err.message.includes(`the archive ${m.url}/${f.small.file} is corrupt or truncated`),
      err.message,
    )
    assert.match(err.message, /delete it and download or stage it again/)
    return true
  })
  assert.deepEqual(cacheEntries(m.env), [], 'nothing half-unpacked is left in the cache')
})

test('a manifest with the wrong sha256 names both files and installs nothing', async () => {
  const m = mirror()
  const manifest = JSON.parse(readFileSync(m.manifest, 'utf8'))
  writeFileSync(m.manifest, JSON.stringify({ ...manifest, sha256: '0'.repeat(64) }))
  await assert.rejects(resolveDistribution(opts(m.env)), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'dist.checksum')
    assert.ok(err.message.startsWith(`checksum mismatch for ${m.url}/${f.small.file}: `), err.message)
    assert.ok(
      err.message.includes(`${m.url}/cpython-${MINOR}-${PLATFORM}.json says sha256 ${'0'.repeat(64)}`),
    )
    assert.ok(err.message.includes(`the file has ${f.small.sha256}`))
    assert.match(err.message, /publish them again together .* Nothing was installed\./)
    return true
  })
  assert.deepEqual(cacheEntries(m.env), [])
})

test('a missing file:// manifest is the not-found error with the URL and the commands to run', async () => {
  const m = mirror()
  const env = { ...m.env, VIS_PYTHON_DIST_URL: `${m.url}/nowhere` }
  await assert.rejects(resolveDistribution(opts(env)), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'dist.not-found')
    assert.ok(
      err.message.includes(`could not read ${m.url}/nowhere/cpython-${MINOR}-${PLATFORM}.json`),
      err.message,
    )
    assert.match(err.message, /vis runtime stage --python 3\.11/)
    return true
  })
})

test('a runtime prebuild for the wrong minor is refused before it is loaded, naming the file', {
  skip: needs(
    addonFile('vis_py312') !== undefined,
    'the Python 3.12 runtime addon',
    'node bin/vis.js runtime stage --python 3.12 && npm run build:addon',
  ),
}, () => {
  const other = addonFile('vis_py312')
  const right = addonFile('vis_py311')
  assert.ok(other && right, 'the 3.11 and 3.12 runtime addons are built')
  const dir = tempDir('vis-addon-dir-')
  process.env.VIS_ADDON_DIR = dir
  try {
    copyFileSync(other, join(dir, 'vis_py311.node'))
    assert.throws(
      () => runtimeAddonPath('3.11'),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'native.version-mismatch')
        assert.equal(
          err.message,
          `${join(dir, 'vis_py311.node')} is the runtime addon for Python 3.12, but it stands where the one for Python 3.11 belongs; ` +
            'reinstall vis-runtime (its prebuilds are per minor), or in a checkout rebuild with `npm run build:addon`',
        )
        return true
      },
    )
    // The right file in the same place is accepted.
    copyFileSync(right, join(dir, 'vis_py311.node'))
    assert.equal(runtimeAddonPath('3.11'), join(dir, 'vis_py311.node'))
  } finally {
    delete process.env.VIS_ADDON_DIR
  }
})

test('vis doctor ends with what is missing, the Debian command and what fails until then', async () => {
  const r = await runCli(['doctor'], cliEnv({ VIS_BWRAP: '/nonexistent/bwrap', PATH: '/nonexistent' }))
  assert.equal(r.status, 2, r.stdout + r.stderr)
  assert.match(r.stdout, /^MISSING bubblewrap: bubblewrap is not installed/m)
  assert.match(r.stdout, /^ {8}fix: sudo apt-get install -y bubblewrap$/m)
  assert.match(r.stdout, /^ {8}until then: every session refuses to start \(confine\.unavailable\)/m)
  assert.match(r.stdout, /^Debian\/Ubuntu, all at once: sudo apt-get install -y bubblewrap$/m)
  assert.match(r.stdout, /^errors above: sandboxes will refuse to start$/m)
  // With the opt-out, sessions start without the layer: still an error, said as what happens.
  const optOut = await runCli(
    ['doctor'],
    cliEnv({ VIS_BWRAP: '/nonexistent/bwrap', PATH: '/nonexistent', VIS_ALLOW_UNCONFINED: '1' }),
  )
  assert.equal(optOut.status, 2, optOut.stdout + optOut.stderr)
  assert.match(optOut.stdout, /^MISSING bubblewrap: bubblewrap is not installed/m)
  assert.match(
    optOut.stdout,
    /^errors above: VIS_ALLOW_UNCONFINED=1, so sandboxes start WITHOUT the missing layers$/m,
  )
  assert.match(
    optOut.stdout,
    /^ {8}until then: sessions start WITHOUT this layer \(VIS_ALLOW_UNCONFINED=1\)/m,
  )
  assert.doesNotMatch(optOut.stdout, /refuse to start|refuses to start/)
  assert.match(optOut.stdout, /^note {4}opt-out: VIS_ALLOW_UNCONFINED=1/m)
  assert.match(optOut.stdout, /^ {8}fix: unset VIS_ALLOW_UNCONFINED once every layer above is available$/m)
})

test('the summary joins every missing package into one apt-get line, and says so when nothing is missing', () => {
  const checks = [
    { id: 'bubblewrap', level: 'error' as const, message: 'bubblewrap is not installed' },
    { id: 'nsenter', level: 'error' as const, message: 'nsenter is not installed' },
    { id: 'cgroup.memory', level: 'warn' as const, message: 'no usable memory controller' },
  ]
  assert.equal(aptCommand(checks), 'sudo apt-get install -y bubblewrap util-linux')
  const lines = summaryLines(checks)
  assert.ok(lines.includes('        until then: the shell and git tools cannot start their jails'))
  assert.ok(lines.includes('note    cgroup.memory: no usable memory controller'))
  assert.deepEqual(summaryLines([{ id: 'kernel', level: 'info', message: 'Linux' }]), [
    'every confinement layer a session needs is available',
  ])
  assert.equal(aptCommand([]), undefined)
})

test('a bundle takes a staged archive after checking it, else packs the CPython this machine has', async () => {
  const m = mirror()
  await resolveDistribution(opts(m.env)) // the small 3.11 tree is now in the cache
  const into = tempDir('vis-bundle-py-')
  scratch.push(into)
  // From a release directory: copied with both manifests.
  const copied = await bundleArchive(m.dir, MINOR, PLATFORM, into)
  assert.deepEqual(copied, {
    minor: MINOR,
    version: f.small.version,
    archive: `cpython/${f.small.file}`,
    from: join(m.dir, f.small.file),
  })
  assert.equal(await sha256File(join(into, f.small.file)), f.small.sha256)
  // A damaged archive is not bundled.
  writeFileSync(m.archive, 'not an archive')
  await assert.rejects(bundleArchive(m.dir, MINOR, PLATFORM, tempDir('vis-bundle-py-')), (err: Error) => {
    assert.match(
      err.message,
      /has sha256 [0-9a-f]{64}, but .* says [0-9a-f]{64}; stage it again: `vis runtime stage --python 3\.11 --force`/,
    )
    return true
  })
  // No release directory: the cached tree is packed, and what it packs unpacks and validates.
  const saved = process.env.VIS_PYTHON_STAGED_DIR
  process.env.VIS_PYTHON_STAGED_DIR = join(m.env.VIS_HOME!, 'no-staged')
  try {
    const packed = tempDir('vis-bundle-py-')
    scratch.push(packed)
    const r = await bundleArchive(join(m.dir, 'nowhere'), MINOR, PLATFORM, packed)
    const manifest = JSON.parse(readFileSync(join(packed, `cpython-${MINOR}-${PLATFORM}.json`), 'utf8'))
    assert.equal(r.archive, `cpython/${manifest.file}`)
    // Said as what happened: the cached tree was packed (not "from" the archives directory).
    assert.equal(r.from, `${cacheRoot(MINOR)} (packed: no staged archive)`)
    assert.equal(await sha256File(join(packed, manifest.file)), manifest.sha256)
    const out = tempDir('vis-unpacked-')
    scratch.push(out)
    await unpackArchive(join(packed, manifest.file), out)
    assert.equal(validateTree(join(out, 'python')).version, f.small.version)
    // Nothing staged, nothing cached, nothing released: what to run.
    process.env.VIS_HOME = tempDir('vis-home-')
    await assert.rejects(bundleArchive(join(m.dir, 'nowhere'), MINOR, PLATFORM, packed), (err: Error) => {
      assert.match(
        err.message,
        /no CPython 3\.11 on this machine; stage it .* or fetch it \(`vis runtime fetch --python 3\.11`\) first/,
      )
      return true
    })
  } finally {
    if (saved === undefined) delete process.env.VIS_PYTHON_STAGED_DIR
    else process.env.VIS_PYTHON_STAGED_DIR = saved
  }
})
