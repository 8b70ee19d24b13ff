// Attack (after the eleventh outsider pass's notes): the tenth pass bound the folder of the node the
// host runs read-only in the jail, but only its bin/ folder, and only in the jail. An nvm/fnm/volta node
// under $HOME is a whole install (bin/node beside include/node and lib/node_modules: the npm `vis
// bundle` runs, and every global package), and the host file tools (`move`, `write`, ...) run on the
// host, outside the jail. A session rooted above that install could (a) move bin/ aside through the
// host's `move` tool and plant a node of its own, or (b) rewrite lib/node_modules/npm, which the host
// runs later. Both must be refused: the jail binds the whole install read-only (EROFS), and the host
// tools refuse it with `tool.read-only-path`.
//
// Reproduction: R/.nvm/versions/node/v20.0.0 is a node install layout around a copy of the node running
// the tests; a host process run with THAT node (test/attacks/fixtures/one-block-host.mjs) opens a
// session on R whose block tries each write. Before the fix the `move` and the `write` landed.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-node-prefix-'))
after(() => rmSync(base, { recursive: true, force: true }))

const pkg = resolve(import.meta.dirname, '../..')
const fixture = resolve(import.meta.dirname, 'fixtures/one-block-host.mjs')

test('a block changes nothing of the node install the host runs from inside a root, in the jail or through host tools', () => {
  const R = join(base, 'R')
  const prefix = join(R, '.nvm', 'versions', 'node', 'v20.0.0')
  const bin = join(prefix, 'bin')
  const npmCli = join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js')
  mkdirSync(bin, { recursive: true })
  mkdirSync(join(prefix, 'include', 'node'), { recursive: true })
  mkdirSync(join(npmCli, '..'), { recursive: true })
  writeFileSync(join(prefix, 'include', 'node', 'node.h'), '// node\n')
  writeFileSync(npmCli, '// the real npm\n')
  copyFileSync(process.execPath, join(bin, 'node'))
  const q = JSON.stringify
  const code = [
    'import os',
    'try:',
    `    open(${q(npmCli)}, 'a').write('planted')`,
    "    print('jail write: landed')",
    'except OSError as e:',
    "    print('jail write:', e.errno)",
    'try:',
    `    await move(${q(bin)}, ${q(join(R, 'moved-bin'))})`,
    "    print('move: landed')",
    'except Exception as e:',
    "    print('move:', getattr(e, 'code', e))",
    'try:',
    `    await write(${q(npmCli)}, 'planted')`,
    "    print('write: landed')",
    'except Exception as e:',
    "    print('write:', getattr(e, 'code', e))",
  ].join('\n')
  const host = spawnSync(join(bin, 'node'), [fixture, pkg, R, join(base, 'home'), code], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(host.status, 0, `the host process failed: ${host.stdout} ${host.stderr}`)
  const out = host.stdout
  assert.match(out, /jail write: 30/, `the jail binds the install read-only (EROFS): ${out}`)
  assert.match(out, /move: tool\.read-only-path/, `the host's move tool refuses the install's bin/: ${out}`)
  assert.match(out, /write: tool\.read-only-path/, `the host's write tool refuses the install's npm: ${out}`)
  assert.ok(existsSync(join(bin, 'node')), 'bin/node is where it was')
  assert.equal(readFileSync(npmCli, 'utf8'), '// the real npm\n')
})
