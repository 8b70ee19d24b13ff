#!/usr/bin/env node
// Cross-builds the dependencies that ship a native binary through prebuild-install (better-sqlite3)
// for another platform of the seam (issue 37), with its cross toolchain, into
// build/<tuple>/native-deps/<name>/build/Release/. Their own prebuilt downloads are unreachable
// from these machines, so `vis bundle --platform` carries this binary where prebuild-install looks
// first (src/bundle/native-deps.ts), as it carries the x64 one this checkout compiled.
//   node scripts/cross-native-deps.mjs --platform linux-aarch64-gnu
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { values } = parseArgs({
  options: { platform: { type: 'string' }, jobs: { type: 'string', default: '2' } },
})
const jobs = Number(values.jobs)
const seam = await import(pathToFileURL(join(root, 'dist', 'distribution', 'platform.js')).href)
const target = seam.targetFor(values.platform ?? 'linux-aarch64-gnu')
const NODE_ARCH = target.nodeTuple.split('-')[1]

// npm's own node-gyp (the one `npm install` runs); Node's headers from nodedir in ~/.npmrc.
const npmDir = dirname(
  dirname(
    require.resolve('npm/package.json', {
      paths: [dirname(process.execPath), '/usr/lib/node_modules', '/usr/local/lib/node_modules'],
    }),
  ),
)
const nodeGyp = join(npmDir, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')

// node-gyp run directly does not read npm's config: take its nodedir (Node's headers) from npm.
const nodedir = spawnSync('npm', ['config', 'get', 'nodedir'], { encoding: 'utf8' }).stdout?.trim()
const nodedirArgs = nodedir && nodedir !== 'undefined' && nodedir !== 'null' ? [`--nodedir=${nodedir}`] : []

for (const name of ['better-sqlite3']) {
  const src = dirname(require.resolve(`${name}/package.json`, { paths: [root] }))
  const version = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8')).version
  const out = join(root, 'build', target.nodeTuple, 'native-deps', name)
  const binary = join(out, 'build', 'Release', 'better_sqlite3.node')
  const stamp = join(out, '.built-version')
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === version) {
    console.log(`cross-native-deps: ${name} ${version} for ${target.nodeTuple} is built`)
    continue
  }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(dirname(out), { recursive: true })
  cpSync(src, out, { recursive: true, filter: (p) => !p.startsWith(join(src, 'build')) })
  console.log(`cross-native-deps: ${name} ${version} for ${target.nodeTuple} (${target.crossTriple}-g++)`)
  // Configure, then make only the addon (and the sqlite3 library it links), not better-sqlite3's
  // test extension. At -O2 (theirs is -O3): the amalgamation is the whole build's long pole, and
  // CFLAGS from the environment come after gyp's own on the compiler's command line.
  const crossEnv = {
    ...process.env,
    CC: `${target.crossTriple}-gcc`,
    CXX: `${target.crossTriple}-g++`,
    LINK: `${target.crossTriple}-g++`,
    AR: `${target.crossTriple}-ar`,
    // -w: V8's headers warn by the hundred under the cross compiler; it is not our code to fix.
    CFLAGS: '-O2 -w',
    CXXFLAGS: '-O2 -w',
  }
  const configure = spawnSync(
    process.execPath,
    [nodeGyp, 'configure', '--release', `--arch=${NODE_ARCH}`, '--loglevel=warn', ...nodedirArgs],
    { cwd: out, stdio: 'inherit', env: crossEnv },
  )
  const r =
    configure.status !== 0
      ? configure
      : spawnSync('make', ['-C', 'build', 'BUILDTYPE=Release', `-j${jobs}`, 'better_sqlite3'], {
          cwd: out,
          stdio: 'inherit',
          env: crossEnv,
        })
  if (r.status !== 0 || !existsSync(binary)) {
    console.error(`cross-native-deps: building ${name} for ${target.nodeTuple} failed`)
    process.exit(1)
  }
  const machine = readFileSync(binary).readUInt16LE(18)
  console.log(`cross-native-deps: ${binary} (e_machine ${machine})`)
  spawnSync('sh', ['-c', `printf %s ${version} > ${JSON.stringify(stamp)}`])
}
