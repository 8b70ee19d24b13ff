// `vis bundle`'s npm takes its project config from the package only (fourteenth outsider pass): a
// parent folder whose package.json lists the package in `workspaces` and whose .npmrc names a
// `script-shell` lends neither, and the pack itself still works (its prepack script runs through the
// ordinary shell, the tarball is made). Real npm, real files; no session is needed for npm's walk.
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { packPackage } from '../../src/bundle/npm.js'

const base = mkdtempSync(join(tmpdir(), 'vis-bundle-npm-project-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('npm pack reads no .npmrc of a workspace root above the package, and still packs', async () => {
  const R = join(base, 'R')
  const pkg = join(R, 'tools', 'p')
  const out = join(base, 'out')
  mkdirSync(pkg, { recursive: true })
  mkdirSync(out)
  const marker = join(base, 'ran')
  writeFileSync(join(R, 'package.json'), '{"name":"r","private":true,"workspaces":["tools/p"]}\n')
  writeFileSync(join(R, '.npmrc'), `script-shell=${join(R, 'sh.sh')}\n`)
  writeFileSync(join(R, 'sh.sh'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(marker)}\nexit 1\n`)
  chmodSync(join(R, 'sh.sh'), 0o755)
  writeFileSync(
    join(pkg, 'package.json'),
    '{"name":"p","version":"1.0.0","scripts":{"prepack":"echo ordinary > prepack.txt","postpack":"echo \\"$npm_lifecycle_event\\" > postpack.txt"}}\n',
  )
  // npm run by `npm test` hands its children npm_config_local_prefix: as from a person's shell, none.
  const saved = Object.entries(process.env).filter(([k]) => /^npm_/i.test(k))
  for (const [k] of saved) delete process.env[k]
  try {
    assert.equal(await packPackage(pkg, out), 'p-1.0.0.tgz')
  } finally {
    for (const [k, v] of saved) process.env[k] = v
  }
  assert.ok(
    !existsSync(marker),
    `the workspace root's script-shell ran: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}`,
  )
  assert.equal(
    readFileSync(join(pkg, 'prepack.txt'), 'utf8').trim(),
    'ordinary',
    'prepack ran through the usual shell',
  )
  // vis runs the lifecycle scripts itself (npm pack --ignore-scripts), in npm's order, as npm would.
  assert.equal(
    readFileSync(join(pkg, 'postpack.txt'), 'utf8').trim(),
    'postpack',
    'postpack ran after the pack',
  )
  assert.ok(existsSync(join(out, 'p-1.0.0.tgz')))
})
