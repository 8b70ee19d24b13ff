// Attack (sixteenth outsider pass; surface: the name rule of src/mcp-client/server-env.ts).
// Vim takes its runtime folder from $VIMRUNTIME or, when that is unset, from $VIM (`$VIM/vim90`, `:help
// $VIM`), and sources every `plugin/*.vim` there and its `defaults.vim` at start-up; Vim script runs
// programs (`:!`, `system()`). VIMRUNTIME is a location name (RUNTIME) and refused in a root, but VIM holds
// none of the rule's words, so `VIM=W/vim` starts and the first vim the server runs (git's editor for a
// commit or `rebase -i` when no EDITOR is set, a server that edits through `vim -c`) runs the block's
// plugin on the host.
//
// Reproduction: session on W; servers `control` (env VIMRUNTIME=W/vim/vim90) and `vim` (env VIM=W/vim),
// each a node process that runs `vim -c q` at start (no terminal). The block writes W/vim/vim90/plugin/planted.vim
// and W/vim/vim91/plugin/planted.vim (appending to a marker outside W) and connects both.
// Expected: both refused with mcp.launch-denied; the marker never written.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import {
  attackBase,
  attackFolders,
  connectEach,
  landed,
  runEngine,
  runsAtStart,
  type Server,
} from './outsider14-run.js'

const base = attackBase('vis-attack-mcp-vim-dir-')

test("VIM=<a folder in a root> (vim's runtime when VIMRUNTIME is unset) is refused", () => {
  assert.ok(existsSync('/usr/bin/vim'), 'this test needs vim')
  const { W, home, outside, marker } = attackFolders(base)
  const server = (env: Record<string, string>): Server => runsAtStart('/usr/bin/vim', ['-c', 'q'], env)
  const plugin = `call writefile(['W/vim plugin, written by the block, sourced on the host by vim'], ${JSON.stringify(marker)}, 'a')\n`
  const out = runEngine(
    base,
    W,
    home,
    outside,
    {
      control: server({ VIMRUNTIME: `${W}/vim/vim90` }),
      vim: server({ VIM: `${W}/vim` }),
    },
    [
      'import os',
      `W = ${JSON.stringify(W)}`,
      "for v in ('vim90', 'vim91'):",
      "    os.makedirs(W + '/vim/' + v + '/plugin', exist_ok=True)",
      `    open(W + '/vim/' + v + '/plugin/planted.vim', 'w').write(${JSON.stringify(plugin)})`,
      "print('planted')",
      ...connectEach(['control', 'vim']),
    ],
  )
  assert.match(out, /planted/, out)
  assert.match(out, /control refused mcp\.launch-denied/, `VIMRUNTIME=W/vim/vim90 is refused (${out})`)
  assert.ok(
    !existsSync(marker),
    "env VIM=W/vim passed the launch check (VIM has none of the rule's words) and the host's vim sourced " +
      `the block's plugin: ${landed(marker)} (${out.slice(0, 500)})`,
  )
  assert.match(out, /vim refused mcp\.launch-denied/, out)
})
