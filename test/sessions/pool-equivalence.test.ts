// A session served from the warm pool behaves exactly as one whose worker was started for it:
// the same tools (the ones the pool preinstalled, and no more: a preinstalled tool the session
// does not get is gone from the guest), the same working directory, the same refusals of the
// jail and the audit hook, the same host calls. Both runtimes run the same probe; the outputs
// must be equal, and the probe's own assertions make each side's output mean something.
import assert from 'node:assert/strict'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { Session } from '../../src/sessions/session.js'
import { children, python, tempHome } from './helpers.js'

const { home, root } = tempHome('pool-equivalence')

const PROBE = `
import builtins, os
print('cwd', os.getcwd() == ${JSON.stringify(root)})
print('tools', sorted(n for n in ('cat', 'ls', 'grep', 'patch', 'git', 'shell') if hasattr(builtins, n)))
with open('note.txt', 'w') as f:
    f.write('written in the root')
print('cat', cat('note.txt'))
for where in ('/etc/shadow', '/root', ${JSON.stringify(home)}):
    try:
        open(where).read()
        print('read', where)
    except Exception as e:
        print('refused', where, type(e).__name__)
try:
    import socket
    socket.create_connection(('127.0.0.1', 9), timeout=1)
    print('connected')
except Exception as e:
    print('network refused', type(e).__name__)
`

async function probe(rt: Runtime, shell: boolean): Promise<{ out: unknown; specs: unknown; warm: boolean }> {
  // A pooled session's worker was one of this process's children before the session.
  const before = children()
  const s: Session = await rt.createSession({ roots: [root], shell })
  try {
    return {
      out: await s.runBlock(PROBE),
      specs: s.toolSpecs().sort((a, b) => (a.name < b.name ? -1 : 1)),
      warm: before.has(s.pid),
    }
  } finally {
    await s.dispose()
  }
}

test('a pooled session is the same as a fresh one for its policy, tools and refusals included', async () => {
  mkdirSync(join(root, '.git'), { recursive: true })
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  const pooled = await createRuntime({ home, python, pool: { size: 1 } })
  const fresh = await createRuntime({ home, python, pool: { size: 0 } })
  try {
    for (const shell of [false, true]) {
      // The first session of a policy warms its key; the second is served from the pool.
      await (await pooled.createSession({ roots: [root], shell })).dispose()
      await pooled.poolSettled()
      const a = await probe(pooled, shell)
      const b = await probe(fresh, shell)
      assert.equal(a.warm, true, 'the pooled session took the worker waiting warm')
      assert.equal(b.warm, false)
      assert.deepEqual(a, { ...b, warm: true })
      const out = (a.out as { stdout: string }).stdout
      assert.match(out, /^cwd True$/m)
      assert.match(
        out,
        shell
          ? /^tools \['cat', 'git', 'grep', 'ls', 'patch', 'shell'\]$/m
          : /^tools \['cat', 'git', 'grep', 'ls', 'patch'\]$/m,
      )
      assert.match(out, /^cat .*written in the root/m)
      assert.doesNotMatch(out, /^read /m, 'something outside the root was readable')
      assert.match(out, /^network refused /m)
    }

    // Warmed while the workspace was a repository: the pool preinstalled git. Taken after it
    // stopped being one, the session has no git, in the guest as on the host.
    await pooled.poolSettled()
    rmSync(join(root, '.git'), { recursive: true })
    const a = await probe(pooled, false)
    const b = await probe(fresh, false)
    assert.equal(a.warm, true)
    assert.deepEqual(a, { ...b, warm: true })
    assert.match((a.out as { stdout: string }).stdout, /^tools \['cat', 'grep', 'ls', 'patch'\]$/m)
  } finally {
    await pooled.close()
    await fresh.close()
  }
})
