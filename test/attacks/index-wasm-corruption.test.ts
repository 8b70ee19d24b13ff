// ATTACK (issue 31 §3, the structural index): one session poisons the host's index for every
// session. `index()` parses sandbox-written files with tree-sitter's WASM runtime in ONE host
// worker thread shared by the whole process (parse-pool.ts). A 1 MiB Rust file of nothing but
// `<{([` repeated (under the 1 MiB cap, no timeout needed: it fails in about 5 s) makes the
// WASM parser fault inside the thread ("memory access out of bounds" / "null function or
// function signature mismatch"). The fault is caught as an ordinary error (tool.index-failed),
// the thread is neither terminated nor replaced, and the web-tree-sitter runtime it holds is
// left corrupted: from then on EVERY index call of every session, in any language, fails
// ("table index is out of bounds", or tool.grammar-incompatible for a grammar loaded later),
// until the host process restarts. A fault in guest-controlled WASM input must not outlive the
// call that caused it: the thread (or its runtime) should be thrown away after any trap.
//
// Reproduction: session A writes junk.rs (1 MiB of `<{([`) in its root and calls
// index('junk.rs'); session B (another root) calls index('ok.py') before (works) and after
// (fails on the current code).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import { python, tempHome } from '../sessions/helpers.js'

let rt: Runtime
const made: string[] = []
before(async () => {
  const { home } = tempHome('attack-index-wasm')
  rt = await createRuntime({ home, python, pool: { size: 0 } })
})
after(async () => {
  await rt.close()
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

function root(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix))
  made.push(d)
  return d
}

const INDEX_OK = `
try:
    r = await index('ok.py')
    print('OK', [d['name'] for d in r['definitions']])
except Exception as e:
    print('ERR', getattr(e, 'code', None), e)
`

test("one session's pathological file leaves the host's index broken for every other session", async () => {
  const victimRoot = root('vis-attack-index-victim-')
  writeFileSync(join(victimRoot, 'ok.py'), 'def healthy():\n    return 1\n')
  const attackerRoot = root('vis-attack-index-attacker-')
  const victim = await rt.createSession({ roots: [victimRoot] })
  const attacker = await rt.createSession({ roots: [attackerRoot] })
  try {
    // The control: the victim's index works before the attack.
    const first = await victim.runBlock(INDEX_OK)
    assert.match(
      first.stdout ?? '',
      /^OK \['healthy'\]/m,
      `before: ${first.stdout} ${JSON.stringify(first.error)}`,
    )

    const attack = await attacker.runBlock(`
N = 1024 * 1024 - 16
with open('junk.rs', 'w') as f:
    f.write(('<{([' * (N // 4 + 1))[:N])
try:
    await index('junk.rs')
    print('ATTACK parsed')
except Exception as e:
    print('ATTACK', getattr(e, 'code', None), e)
`)
    // Whatever the attacker's own call answers, it is the attacker's problem.
    console.log(attack.stdout?.trim(), attack.error ? JSON.stringify(attack.error) : '')
    // The trap fails the attacker's own call with the catalogued code (the thread is retired).
    assert.match(attack.stdout ?? '', /^ATTACK (parsed|tool\.index-failed )/m, `attack: ${attack.stdout}`)

    // The victim's file is the same healthy file; its index must still work.
    const later = await victim.runBlock(INDEX_OK)
    assert.match(
      later.stdout ?? '',
      /^OK \['healthy'\]/m,
      `another session's index is broken after the attack: ${later.stdout} ${JSON.stringify(later.error)}`,
    )
    // ...and keeps working (not only a single failed call while a thread restarts).
    const again = await victim.runBlock(INDEX_OK)
    assert.match(again.stdout ?? '', /^OK \['healthy'\]/m, `still broken: ${again.stdout}`)
  } finally {
    await victim.dispose()
    await attacker.dispose()
  }
})
