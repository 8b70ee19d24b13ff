// ATTACK (surface 2, host file tools): grep runs ripgrep on the host, unconfined (as the host
// user), and ripgrep honours .gitignore files inside a git repository (only .ignore/.rgignore and
// global ignores are switched off). It opens them by name, following symlinks. So a block makes
// `w/.git/` and `w/.gitignore -> <any host file>`: ripgrep reads that host file (0600, outside
// every root) as ignore rules, and which of the block's own files grep then leaves out says
// which lines the host file holds: a deterministic membership oracle on host files (is
// "KEY=hunter2" a line of it? is a given hash a line of /etc/shadow?), no race needed.
// On the current code the file named like the secret's line is missing from grep's answer.
// Fixed: in a confined session ripgrep runs in the session's tool jail (src/tools/fs/search.ts),
// where only the roots are: whatever link the sandbox swaps in leads to nothing of the host's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hostSecretEngine } from './host-secret-engine.js'

const fx = hostSecretEngine('rgign', 'KEY=hunter2\n')
const { root, secret } = fx

test("grep's ripgrep does not read a host file through a .gitignore symlink", async () => {
  const s = await fx.e.createSession({ roots: [root] })
  const r = await fx.e.runBlock(s.id, {
    code: `import os
os.makedirs('w/.git', exist_ok=True)
os.symlink(${JSON.stringify(secret)}, 'w/.gitignore')
for guess in ['KEY=hunter1', 'KEY=hunter2', 'KEY=hunter3']:
    open('w/' + guess, 'w').write('needle\\n')
r = await grep('needle', paths=['w'])
print(sorted(h['path'] for h in r['hits']))`,
    timeout_ms: 30_000,
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.match(
    r.block.stdout ?? '',
    /w\/KEY=hunter2/,
    `grep's answer left out the file named like a line of ${secret} (read on the host through the link): ${r.block.stdout}`,
  )
})
