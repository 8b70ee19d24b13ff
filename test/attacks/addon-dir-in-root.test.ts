// Attack (tenth outsider pass; SECURITY.md, the layer table's "distributions inside a root" row: "The
// same for `VIS_ADDON_DIR` (native addons the host loads, bound read-only in the jail)"). The jail binds
// VIS_ADDON_DIR read-only (src/worker/spawn.ts, the `native` list, plain `policy.readOnly`), and the host
// file tools refuse to write in it or to move a directory that contains it; but unlike the package, its
// dependencies and the distributions (`packageMounts`, whose parents are pinned from fds), nothing pins
// the folders between the root and that bind. A block renames the addon directory's parent aside with
// os.rename (a folder holding a mount point moves with it) and makes a new `<parent>/addons` holding
// shared objects of its own under the addons' names. Every later host load of an addon by that path runs
// the block's code unconfined: `vis python`, the trusted extension worker, `vis doctor`'s addon check, the
// next vis process. (The same holds for every read-only bind a root contains without pinned parents.)
//
// Reproduction: VIS_ADDON_DIR=R/tools/addons holds copies of the build's addons; a host with that
// environment opens a session on R (test/attacks/fixtures/one-block-host.mjs) whose block runs
// os.rename(R/tools, R/moved-tools), then writes R/tools/addons/<name>.node for each addon = a shared
// object whose constructor writes a marker outside R (compiled by the test with cc, handed to the block
// as bytes). Then `VIS_ADDON_DIR=R/tools/addons vis python -c 'print(1)'`: the marker is written. A fix:
// pin the parents of every read-only bind inside a root (as packageMounts' are), or refuse VIS_ADDON_DIR
// inside any root.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'
import { localBuildDir } from '../../src/native/locate.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-addon-dir-'))
after(() => rmSync(base, { recursive: true, force: true }))

const pkg = resolve(import.meta.dirname, '../..')
const fixture = resolve(import.meta.dirname, 'fixtures/one-block-host.mjs')

test('a block cannot replace the addons VIS_ADDON_DIR names when it lies inside a root', () => {
  const R = join(base, 'R')
  const outside = join(base, 'outside')
  const addons = join(R, 'tools', 'addons')
  mkdirSync(addons, { recursive: true })
  mkdirSync(outside)
  const names = readdirSync(localBuildDir()).filter((n) => n.endsWith('.node'))
  assert.ok(names.length > 0, `no addons built in ${localBuildDir()}: run npm run build:addon`)
  for (const n of names) copyFileSync(join(localBuildDir(), n), join(addons, n))
  const marker = join(outside, 'ran-on-the-host')
  // The block's shared object (the sandbox has no compiler; the bytes are what matters).
  const src = join(base, 'planted.c')
  const so = join(base, 'planted.so')
  writeFileSync(
    src,
    `#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {\n  FILE *f = fopen(${JSON.stringify(marker)}, "w");\n  if (f) { fputs("planted addon ran on the host", f); fclose(f); }\n}\n`,
  )
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', so, src], { encoding: 'utf8' })
  assert.equal(cc.status, 0, `cc could not build the planted object: ${cc.stderr}`)
  const bytes = readFileSync(so).toString('base64')

  const code = [
    'import base64, os',
    `R = ${JSON.stringify(R)}`,
    `names = ${JSON.stringify(names)}`,
    'try:',
    "    open(R + '/tools/addons/' + names[0], 'ab')",
    "    print('addon file: writable')",
    'except OSError as e:',
    "    print('addon file:', e.strerror)",
    'try:',
    "    os.rename(R + '/tools', R + '/moved-tools')",
    "    os.makedirs(R + '/tools/addons')",
    `    data = base64.b64decode(${JSON.stringify(bytes)})`,
    '    for n in names:',
    "        open(R + '/tools/addons/' + n, 'wb').write(data)",
    "    print('replaced')",
    'except OSError as e:',
    "    print('replace refused:', e)",
  ].join('\n')
  const env = { ...process.env, VIS_ADDON_DIR: addons }
  const host = spawnSync(process.execPath, [fixture, pkg, R, join(base, 'home'), code], {
    env,
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(host.status, 0, `the host process failed: ${host.stdout} ${host.stderr}`)
  assert.ok(!existsSync(marker), 'the marker was written from inside the jail')

  // The person's next command with the same environment.
  const next = spawnSync(process.execPath, [join(pkg, 'bin', 'vis.js'), 'python', '-c', 'print(1)'], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.ok(
    !existsSync(marker),
    `a block of a session on R moved VIS_ADDON_DIR's parent aside and planted its own addons at ${addons}; ` +
      `the next vis loaded one on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''} ` +
      `(block: ${host.stdout.trim()}; next: exit ${next.status} ${next.stderr.trim().slice(0, 200)})`,
  )
})
