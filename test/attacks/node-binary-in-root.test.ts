// Attack (tenth outsider pass; SECURITY.md Roots: a root may contain the vis home ("a workspace at
// $HOME"), and everything the host runs from inside a root is kept out of the sandbox's reach — the
// package, every enclosing node_modules, the CPython distributions, VIS_ADDON_DIR, programs on PATH).
// The node executable the host itself runs is not among them. People install Node under their home
// (nvm: ~/.nvm/versions/node/vX/bin/node; fnm, volta, asdf alike), so a session rooted at $HOME (or at
// any folder above the Node install) has the host's own `process.execPath` inside a root. The jail binds
// that FILE read-only (it is the worker's command), so writing it fails (and ETXTBSY while it runs), but
// its folder is an ordinary writable folder of the root: a block renames `.../bin` aside and makes a new
// `bin/node` of its own. The host then runs it unconfined: `vis` (its `#!/usr/bin/env node` finds nvm's
// node), the MCP host's next launch, and this very process whenever it starts `process.execPath` outside
// a jail (a trusted extension worker, `vis doctor`'s addon check).
//
// Reproduction: R/.nvm/versions/node/v20.0.0/bin/node is a copy of the node running the tests; a host
// process run with THAT node (test/attacks/fixtures/one-block-host.mjs) opens a session on R whose
// block runs: os.rename(bin, R/moved-bin); os.makedirs(bin); write bin/node = a shell script writing a
// marker outside R. Then the person runs `R/.nvm/versions/node/v20.0.0/bin/node bin/vis.js --version` (what
// `vis --version` does with nvm's node first on PATH): the marker is written. A fix: treat the directory
// of the node the host runs (and the Node install around it) like the package: bound read-only with its
// parents pinned in every jail, refused to the host file tools, and a root inside it refused.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-node-in-root-'))
after(() => rmSync(base, { recursive: true, force: true }))

const pkg = resolve(import.meta.dirname, '../..')
const fixture = resolve(import.meta.dirname, 'fixtures/one-block-host.mjs')

test('a block cannot replace the node executable the host runs when it lies inside a root', () => {
  const R = join(base, 'R')
  const outside = join(base, 'outside')
  const bin = join(R, '.nvm', 'versions', 'node', 'v20.0.0', 'bin')
  const node = join(bin, 'node')
  mkdirSync(bin, { recursive: true })
  mkdirSync(outside)
  copyFileSync(process.execPath, node)
  const marker = join(outside, 'ran-on-the-host')
  const fake = `#!/bin/sh\necho "planted node ran: $*" > ${JSON.stringify(marker)}\n`
  const code = [
    'import os',
    `b = ${JSON.stringify(bin)}`,
    'try:',
    "    open(b + '/node', 'ab')",
    "    print('node file: writable')",
    'except OSError as e:',
    "    print('node file:', e.strerror)",
    'try:',
    `    os.rename(b, ${JSON.stringify(join(R, 'moved-bin'))})`,
    '    os.makedirs(b)',
    `    open(b + '/node', 'w').write(${JSON.stringify(fake)})`,
    "    os.chmod(b + '/node', 0o755)",
    "    print('replaced')",
    'except OSError as e:',
    "    print('replace refused:', e)",
  ].join('\n')

  // The host, run with the node that lies inside R.
  const host = spawnSync(node, [fixture, pkg, R, join(base, 'home'), code], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  assert.equal(host.status, 0, `the host process failed: ${host.stdout} ${host.stderr}`)
  assert.ok(!existsSync(marker), 'the marker was written from inside the jail')

  // The person's next vis command with that node.
  const next = spawnSync(node, [join(pkg, 'bin', 'vis.js'), '--version'], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  assert.ok(
    !existsSync(marker),
    `a block of a session on R replaced the folder of the node the host runs (${node}) and the next vis run ` +
      `executed the block's script on the host: ${existsSync(marker) ? readFileSync(marker, 'utf8').trim() : ''} ` +
      `(block: ${host.stdout.trim()}; next: exit ${next.status})`,
  )
})
