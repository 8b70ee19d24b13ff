// `npm pack` refuses to pack a checkout whose dist/ is older than src/ or whose prebuilds are
// not the current build's (scripts/prepack.mjs, wired as package.json's prepack): the tarball
// carries both as they are on disk. Driven through npm itself, on a small package laid out
// like this one.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { repoRoot, runCollected, tempDir } from './helpers.js'

const pkg = tempDir('vis-prepack-')
after(() => rmSync(pkg, { recursive: true, force: true }))

const ADDON = 'vis_loader/prebuilds/linux-x64/node.napi.glibc.node'

function write(rel: string, text: string, mtime?: Date): void {
  const p = join(pkg, rel)
  mkdirSync(join(p, '..'), { recursive: true })
  writeFileSync(p, text)
  if (mtime) utimesSync(p, mtime, mtime)
}

const pack = () => runCollected('npm', ['pack', '--dry-run', '--cache', join(pkg, '.npm')], { cwd: pkg })

test('npm pack checks dist/ against src/ and every prebuild against build/Release', {
  timeout: 120_000,
}, async () => {
  const real = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: { prepack: string }
  }
  write(
    'package.json',
    JSON.stringify({ name: 'prepack-probe', version: '1.0.0', scripts: { prepack: real.scripts.prepack } }),
  )
  mkdirSync(join(pkg, 'scripts'))
  for (const f of ['prepack.mjs', 'package-checks.mjs', 'tree-times.mjs'])
    copyFileSync(join(repoRoot, 'scripts', f), join(pkg, 'scripts', f))
  const old = new Date(Date.now() - 60_000)
  write('src/index.ts', 'export const x = 1\n', old)
  write('dist/cli/main.js', 'export {}\n')
  write('dist/index.js', 'export const x = 1\n')
  write('build/Release/vis_loader.node', 'the loader as built\n')
  write(`prebuilds/${ADDON}`, 'the loader as built\n')
  const sha = createHash('sha256').update('the loader as built\n').digest('hex')
  write(
    'prebuilds/manifest.json',
    JSON.stringify({ napi: 8, files: [{ part: 'vis_loader', path: ADDON, sha256: sha }] }),
  )

  const fresh = await pack()
  assert.equal(fresh.status, 0, fresh.out)

  // src/ edited after the last build: dist/ would ship the old code.
  write('src/index.ts', 'export const x = 2\n')
  const stale = await pack()
  assert.notEqual(stale.status, 0, stale.out)
  assert.match(stale.out, /vis-runtime prepack: dist\/ is older than src\/: run `npm run build`/)
  write('src/index.ts', 'export const x = 2\n', old)

  // The addon rebuilt, the prebuild not refreshed: the tarball would ship the previous one.
  write('build/Release/vis_loader.node', 'the loader rebuilt\n')
  const oldPrebuild = await pack()
  assert.notEqual(oldPrebuild.status, 0, oldPrebuild.out)
  assert.match(
    oldPrebuild.out,
    /prebuilds\/vis_loader\/prebuilds\/linux-x64\/node\.napi\.glibc\.node is not build\/Release's current vis_loader: run `npm run prebuildify -- --no-build`/,
  )

  // No prebuilds at all (a git dependency compiles at install): packed, with a warning.
  rmSync(join(pkg, 'prebuilds'), { recursive: true })
  const none = await pack()
  assert.equal(none.status, 0, none.out)
  assert.match(
    none.out,
    /no prebuilds\/ \(run `npm run prebuildify`\): this tarball will compile its native parts/,
  )
})
