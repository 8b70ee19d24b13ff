// A release cannot ship a tarball that would install broken: `npm publish` (prepublishOnly) and
// `npm run release:pack` refuse, naming it, when a prebuild of any part, release platform or
// supported Python minor is missing or older than native/, while a plain `npm pack` (a git
// dependency compiles at install) still packs with a warning. Driven through npm itself on a
// small package laid out like this one (scripts/release-check.mjs, package-checks.mjs).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { SUPPORTED_MINORS, TARGETS } from '../../src/distribution/platform.js'
import { repoRoot, runCollected, tempDir } from './helpers.js'

const pkg = tempDir('vis-release-')
after(() => rmSync(pkg, { recursive: true, force: true }))

const TUPLE = 'linux-x64'
const ADDON = 'node.napi.glibc.node'
const old = new Date(Date.now() - 120_000)
const older = new Date(Date.now() - 240_000)

function write(rel: string, text: string, mtime?: Date): void {
  const p = join(pkg, rel)
  mkdirSync(join(p, '..'), { recursive: true })
  writeFileSync(p, text)
  if (mtime) utimesSync(p, mtime, mtime)
}

// part -> [file in build/Release, file in the prebuild]
const PARTS: [string, string, string][] = [
  ['vis_loader', 'vis_loader.node', ADDON],
  ['vis_confine', 'vis_confine.node', ADDON],
  ['vis_seccomp', 'libvis_seccomp.so', 'libvis_seccomp.so'],
  ['vis-launcher', 'vis-launcher', 'vis-launcher'],
  ...SUPPORTED_MINORS.map((m): [string, string, string] => {
    const part = `vis_py${m.replace('.', '')}`
    return [part, `${part}.node`, ADDON]
  }),
]

// Every part built and laid out as prebuildify does, the build's time kept, after native/; for
// this machine's platform and, cross-built into build/<tuple>/Release, every other one (issue 37).
function layOut(skip: string[] = []): void {
  rmSync(join(pkg, 'prebuilds'), { recursive: true, force: true })
  const files = []
  for (const t of TARGETS) {
    const host = t.nodeTuple === TUPLE
    const parts = PARTS.filter(
      ([part]) => !part.startsWith('vis_py') || t.minors.includes(`3.${part.slice(7)}`),
    )
    for (const [part, built, file] of parts) {
      // skip: a part of this machine's platform, or `<tuple>:<part>` of another one
      if (skip.includes(host ? part : `${t.nodeTuple}:${part}`)) continue
      const text = `${part} as built for ${t.nodeTuple}\n`
      write(host ? `build/Release/${built}` : `build/${t.nodeTuple}/Release/${built}`, text, old)
      const path = `${part}/prebuilds/${t.nodeTuple}/${file}`
      write(`prebuilds/${path}`, text, old)
      files.push({
        part,
        platform: t.nodeTuple,
        libc: 'glibc',
        path,
        sha256: createHash('sha256').update(text).digest('hex'),
      })
    }
  }
  write('prebuilds/manifest.json', JSON.stringify({ napi: 8, files }))
}

const npm = (args: string[]) => runCollected('npm', [...args, '--cache', join(pkg, '.npm')], { cwd: pkg })
const check = () => runCollected(process.execPath, [join(pkg, 'scripts', 'release-check.mjs')], { cwd: pkg })
// --dry-run still runs prepublishOnly; --offline and a dead registry: nothing leaves the machine.
const publish = () => npm(['publish', '--dry-run', '--offline', '--registry', 'http://127.0.0.1:9/'])

test('release-check and npm publish refuse a missing or stale prebuild; npm pack only warns without any', {
  timeout: 180_000,
}, async () => {
  const real = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  const { prepack, prepublishOnly } = real.scripts
  assert.equal(prepublishOnly, 'node scripts/release-check.mjs')
  write(
    'package.json',
    JSON.stringify({ name: 'release-probe', version: '1.0.0', scripts: { prepack, prepublishOnly } }),
  )
  mkdirSync(join(pkg, 'scripts'))
  for (const f of ['prepack.mjs', 'release-check.mjs', 'package-checks.mjs', 'tree-times.mjs'])
    copyFileSync(join(repoRoot, 'scripts', f), join(pkg, 'scripts', f))
  write('src/index.ts', 'export const x = 1\n', older)
  write('native/runtime/addon.cc', '// the source\n', older)
  write('CMakeLists.txt', '# the build\n', older)
  write('dist/cli/main.js', 'export {}\n')
  write(
    'dist/distribution/platform.js',
    `export const SUPPORTED_MINORS = ${JSON.stringify(SUPPORTED_MINORS)}\nexport const TARGETS = ${JSON.stringify(TARGETS)}\n`,
  )
  layOut()

  const ok = await check()
  assert.equal(ok.status, 0, ok.out)
  assert.match(ok.out, /every prebuild is present and current/)
  const published = await publish()
  assert.equal(published.status, 0, published.out)

  // The newest minor's runtime addon never built: a release without it cannot run that minor.
  const last = SUPPORTED_MINORS.at(-1) as string
  const lastPart = `vis_py${last.replace('.', '')}`
  layOut([lastPart])
  const missing = await check()
  assert.equal(missing.status, 1, missing.out)
  assert.ok(
    missing.out.includes(
      `vis-runtime release: no prebuild of the runtime addon for Python ${last} (${lastPart}) for linux-x64 glibc: stage that Python and run \`npm run release:pack\``,
    ),
    missing.out,
  )
  assert.match(missing.out, /refusing: 1 problem\(s\) above; nothing was packed or published/)
  const refused = await publish()
  assert.notEqual(refused.status, 0, refused.out)
  assert.match(
    refused.out,
    new RegExp(`no prebuild of the runtime addon for Python ${last.replace('.', '\\.')}`),
  )
  // A plain pack of the same checkout still packs: only what it lists is checked.
  const packed = await npm(['pack', '--dry-run'])
  assert.equal(packed.status, 0, packed.out)

  // issue 37: the arm64 runtime addon never cross-built: a release without it cannot run there.
  layOut(['linux-arm64:vis_py311'])
  const noArm = await check()
  assert.equal(noArm.status, 1, noArm.out)
  assert.ok(
    noArm.out.includes(
      'vis-runtime release: no prebuild of the runtime addon for Python 3.11 (vis_py311) for linux-arm64 glibc',
    ),
    noArm.out,
  )

  // native/ edited after the build: every prebuild is the old source's.
  layOut()
  write('native/runtime/addon.cc', '// the source, edited\n')
  const stale = await check()
  assert.equal(stale.status, 1, stale.out)
  assert.match(
    stale.out,
    /prebuilds\/vis_loader\/prebuilds\/linux-x64\/node\.napi\.glibc\.node \(vis_loader, linux-x64\) is older than native\/: rebuild it \(`npm run release:pack`\)/,
  )
  assert.notEqual((await publish()).status, 0)
  write('native/runtime/addon.cc', '// the source, edited\n', older)

  // No prebuilds at all: npm pack warns and packs (a git dependency), a release refuses.
  rmSync(join(pkg, 'prebuilds'), { recursive: true })
  const none = await npm(['pack', '--dry-run'])
  assert.equal(none.status, 0, none.out)
  assert.match(
    none.out,
    /no prebuilds\/ \(run `npm run prebuildify`\).*a release needs them \(`npm run release:pack`\)/,
  )
  const noneRelease = await check()
  assert.equal(noneRelease.status, 1)
  assert.match(
    noneRelease.out,
    /vis-runtime release: no prebuilds\/ at all: stage that Python and run `npm run release:pack`/,
  )
  assert.notEqual((await publish()).status, 0)
})
