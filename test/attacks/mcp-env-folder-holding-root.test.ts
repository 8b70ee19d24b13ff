// Attack (seventeenth outsider pass; surface: the env judgement, src/mcp-client/judge-word.ts judgeWord).
// A value is refused when a place it names lies IN a root. A value naming a folder that HOLDS a root is
// not judged at all (only HOME, XDG_CONFIG_HOME and XDG_DATA_HOME are, by folderInRoot), yet most
// variables that name a folder are read by their programs at fixed places below it: vim's `$VIM` puts
// `$VIM/vimfiles` on 'runtimepath' (`:help 'runtimepath'`: $HOME/.vim, $VIM/vimfiles, $VIMRUNTIME...) and
// sources every `plugin/*.vim` there; GOPATH's src/ and bin/, PYTHONUSERBASE's lib/pythonX.Y/site-packages,
// npm's prefix lib/node_modules and etc/npmrc, CARGO_HOME's config.toml are the same shape. `VIM=P` with a
// session on P/vimfiles (the person's shared vim configuration, kept as a project) passes, and the first vim
// the server runs (git's editor, a server that edits through `vim -c`) runs the block's plugin on the host.
//
// Reproduction: P=<base>/vimcfg (outside every root), a session on W=P/vimfiles. Servers `control` (env
// VIM=W, a value in the root) and `parent` (env VIM=P), each a node process that runs `vim -c q` at start.
// The block writes W/plugin/planted.vim (appending to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { connectEach, runEngine, type Server } from './outsider14-run.js'

const base = mkdtempSync(join(tmpdir(), 'vis-attack-mcp-folder-holding-root-'))
after(() => rmSync(base, { recursive: true, force: true }))

test('an env value naming a folder that holds a root (VIM=P, root P/vimfiles) is refused', () => {
  assert.ok(existsSync('/usr/bin/vim'), 'this test needs vim')
  const P = join(base, 'vimcfg')
  const W = join(P, 'vimfiles')
  const home = join(base, 'vis-home')
  const outside = join(base, 'outside')
  for (const d of [P, W, home, outside]) mkdirSync(d)
  const marker = join(outside, 'ran-on-the-host')
  const server = (env: Record<string, string>): Server => ({
    command: process.execPath,
    args: [
      '-e',
      "require('node:child_process').spawnSync('/usr/bin/vim', ['-c', 'q'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 }); setTimeout(() => {}, 3000)",
    ],
    env,
    timeout_ms: 6_000,
  })
  const plugin = `call writefile(['W/plugin/planted.vim (the root P/vimfiles), written by the block, sourced on the host by vim through VIM=P'], ${JSON.stringify(marker)}, 'a')\n`
  const out = runEngine(base, W, home, outside, { control: server({ VIM: W }), parent: server({ VIM: P }) }, [
    'import os',
    `W = ${JSON.stringify(W)}`,
    "os.makedirs(W + '/plugin', exist_ok=True)",
    `open(W + '/plugin/planted.vim', 'w').write(${JSON.stringify(plugin)})`,
    "print('planted')",
    ...connectEach(['control', 'parent']),
  ])
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `VIM=W is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    'env VIM=P passed the launch check (P holds the session root P/vimfiles; only a place IN a root is ' +
      "refused) and the host's vim sourced the block's plugin from $VIM/vimfiles: " +
      `${existsSync(marker) ? readFileSync(marker, 'utf8').split('\n')[0] : ''} (${out.slice(0, 500)})`,
  )
  assert.match(out, /parent refused mcp\.launch-denied/, out)
})
