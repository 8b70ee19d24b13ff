// The eighteenth outsider pass's readings of a stdio server's relative words (src/mcp-client/judge-word.ts
// folderBases, expansionReaching), in both directions, through stdioLaunch against a real session root
// (noteSessionRoot marks it as a session does) and real folders and links: HOME is a base after a bare
// `cd`/`pushd`/`popd`, every folder an mcp.json env value names is one (`PYTHONPATH=<root's parent>`
// with `-m work.tool`), relative `cd` chains are followed to a fixed point, and a pattern's matches are
// followed past its last pattern component. The same forms that name nothing in a root still start.
// The attacks themselves: test/attacks/mcp-args-cd-unnamed-folder-in-root.test.ts,
// mcp-env-home-on-pythonpath-module-in-root.test.ts, mcp-args-glob-then-link-into-root.test.ts.
import assert from 'node:assert/strict'
import { mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type LaunchConfig, stdioLaunch } from '../../src/mcp-client/launch.js'
import { VisError } from '../../src/util/errors.js'
import { noteSessionRoot } from '../../src/util/host-programs.js'
import { tempDir } from './helpers.js'

const base = realpathSync(tempDir('launch-args-bases'))
const hostHome = process.env.HOME
after(() => {
  process.env.HOME = hostHome
  rmSync(base, { recursive: true, force: true })
})
// HOME holds the root `work`, as a project in ~ does.
const H = join(base, 'home')
const root = join(H, 'work')
const visHome = join(base, 'vis-home')
const outside = join(base, 'outside')
for (const d of [
  visHome,
  join(root, 'tools'),
  join(outside, 'dir'),
  join(outside, 'other'),
  join(H, 'other'),
])
  mkdirSync(d, { recursive: true })
symlinkSync(root, join(outside, 'dir', 'link'))
symlinkSync(join(outside, 'other'), join(outside, 'dir', 'elsewhere'))
noteSessionRoot(root)

// 'started' or the refusal's message (always mcp.launch-denied), with HOME=H as the host's.
function launch(config: Partial<LaunchConfig> & { args?: string[] }): string {
  process.env.HOME = H
  try {
    stdioLaunch('s', { command: '/bin/sh', env: {}, ...config }, visHome, {})
    return 'started'
  } catch (err) {
    assert.ok(err instanceof VisError, String(err))
    assert.equal(err.code, 'mcp.launch-denied', err.message)
    return err.message
  } finally {
    process.env.HOME = hostHome
  }
}

test('a bare cd, pushd or popd makes HOME a folder relative words are read from', () => {
  for (const script of [
    'cd && . work/tools/hook.sh',
    'cd; . work/tools/hook.sh',
    'cd -P -- && . work/tools/hook.sh',
    'cd >/dev/null && . work/tools/hook.sh',
    'cd "" && . work/tools/hook.sh',
    'pushd && . work/tools/hook.sh',
    'popd 2>/dev/null; . work/tools/hook.sh',
    'if true; then cd\n. work/tools/hook.sh; fi',
  ])
    assert.match(launch({ args: ['-c', script] }), /names .*lies in the session root/, script)
  for (const script of [
    // Nothing below HOME in a root is named, or no cd goes to HOME.
    'cd && . other/env.sh',
    `cd ${outside} && . work/tools/hook.sh`,
    'cd - && . work/tools/hook.sh',
    'echo cdrom && . work/tools/hook.sh',
  ])
    assert.equal(launch({ args: ['-c', script] }), 'started', script)
})

test('relative cd chains are followed past two steps', () => {
  const deep = join(outside, 'a', 'b', 'c')
  mkdirSync(deep, { recursive: true })
  symlinkSync(root, join(deep, 'proj'))
  const chain = `cd ${outside} && cd a && cd b && cd c && . proj/tools/hook.sh`
  assert.match(launch({ args: ['-c', chain] }), /names .*lies in the session root/, chain)
  const clean = `cd ${outside} && cd a && cd b && cd c && . other/x.sh`
  assert.equal(launch({ args: ['-c', clean] }), 'started', clean)
})

test("module and relative words are read against the folders mcp.json's env values name", () => {
  const refused: Record<string, string>[] = [
    { PYTHONPATH: H },
    { PYTHONPATH: `/usr/lib:${H}` },
    { NODE_PATH: H },
    { CDPATH: H },
  ]
  for (const env of refused)
    assert.match(
      launch({ command: '/bin/sh', args: ['-m', 'work.tool'], env }),
      /names .*lies in the session root/,
      JSON.stringify(env),
    )
  const started: Record<string, string>[] = [
    { PYTHONPATH: outside },
    { PYTHONPATH: H, NODE_ENV: 'production' },
  ]
  for (const env of started)
    assert.equal(launch({ args: ['-m', 'other.tool'], env }), 'started', JSON.stringify(env))
})

test("a pattern's match is followed past its last pattern component", () => {
  assert.match(
    launch({ args: ['-c', `. ${outside}/d?r/link/tools/hook.sh`] }),
    /holds a shell pattern .* may expand to a path in/,
  )
  assert.match(
    launch({ args: ['-c', `. ${outside}/d*/elsewhere/../link/tools/hook.sh`] }),
    /holds a shell pattern .* may expand to a path in/,
  )
  assert.equal(launch({ args: ['-c', `. ${outside}/d?r/elsewhere/env.sh`] }), 'started')
})
