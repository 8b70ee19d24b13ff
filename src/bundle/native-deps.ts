// Dependencies that fetch a prebuilt binary at install time with prebuild-install
// (better-sqlite3) would compile from source on an offline machine, and fail with no
// compiler. prebuild-install first looks in <npm cache>/_prebuilds/ under a name derived
// from its download URL; a bundle puts the binary this package already built there, so
// the offline install finds it as if downloaded. Only for the same version and Node ABI:
// the name encodes both, so a different Node simply does not match and compiles.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Target } from '../distribution/platform.js'
import { packageRoot } from '../util/home.js'
import { findPackageDir } from '../util/packages.js'

// Asks the bundle tree's own prebuild-install where it would look (cwd: the dependency).
const WHERE = [
  "const pkg = require('./package.json')",
  "const opts = { ...require('prebuild-install/rc')(pkg), pkg }",
  "const util = require('prebuild-install/util')",
  'process.stdout.write(util.cachedPrebuild(util.getDownloadUrl(opts)))',
].join('\n')

// For another platform, prebuild-install is told its platform and arch as npm would tell it there.
function cachedName(depDir: string, cacheDir: string, target?: Target): Promise<string | undefined> {
  const platformEnv = target
    ? { npm_config_platform: target.nodeTuple.split('-')[0], npm_config_arch: target.nodeTuple.split('-')[1] }
    : {}
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-e', WHERE],
      { cwd: depDir, env: { ...process.env, npm_config_cache: cacheDir, ...platformEnv } },
      (err, stdout) => resolve(err ? undefined : stdout.trim() || undefined),
    )
  })
}

type Dep = { name: string; version: string; dir: string }

function prebuildInstallDeps(project: string): Dep[] {
  const nm = join(project, 'node_modules')
  const out: Dep[] = []
  if (!existsSync(nm)) return out
  for (const name of readdirSync(nm)) {
    const pj = join(nm, name, 'package.json')
    if (!existsSync(pj)) continue
    const pkg = JSON.parse(readFileSync(pj, 'utf8')) as {
      version: string
      scripts?: Record<string, string>
    }
    if (pkg.scripts?.install?.includes('prebuild-install'))
      out.push({ name, version: pkg.version, dir: join(nm, name) })
  }
  return out
}

export type CarriedBinary = { name: string; version: string; file: string }

// For each such dependency this package has built (same version), packs its
// build/Release/*.node into the bundle's npm cache where prebuild-install will look. For another
// platform (issue 37) the binary is the cross build of scripts/cross-native-deps.mjs, in
// build/<tuple>/native-deps/<name>/.
export async function carryNativeDeps(
  project: string,
  cacheDir: string,
  target?: Target,
): Promise<CarriedBinary[]> {
  const { create } = await import('tar')
  const carried: CarriedBinary[] = []
  for (const dep of prebuildInstallDeps(project)) {
    const ours = target
      ? join(packageRoot, 'build', target.nodeTuple, 'native-deps', dep.name)
      : findPackageDir(dep.name)
    if (!ours || !existsSync(ours)) continue
    const release = join(ours, 'build', 'Release')
    const pj = join(ours, 'package.json')
    if (!existsSync(pj) || !existsSync(release)) continue
    if ((JSON.parse(readFileSync(pj, 'utf8')) as { version: string }).version !== dep.version) continue
    const binaries = readdirSync(release).filter((n) => n.endsWith('.node') && !n.startsWith('test_'))
    const where = await cachedName(dep.dir, cacheDir, target)
    if (binaries.length === 0 || !where) continue
    mkdirSync(dirname(where), { recursive: true })
    await create(
      { file: where, gzip: true, cwd: ours, portable: true },
      binaries.map((b) => join('build', 'Release', b)),
    )
    carried.push({ name: dep.name, version: dep.version, file: where })
  }
  return carried
}
