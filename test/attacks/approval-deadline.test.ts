// ATTACK (surface 8, approvals): a tool call waiting for an approval holds the block's deadline
// (README: "A tool call waiting for an approval does not use up its block's timeout: the wait is
// bounded by approvals.timeoutMs"). But the hold is per call, and a block can make calls forever:
// when one approval times out the guest catches the error and asks again, and meanwhile a guest
// thread runs unbounded work. So a block with a 800 ms timeout runs for as long as it likes
// (here ~9 s: 30 approvals x 300 ms) doing work on a thread the whole time: the wall clock,
// which is the only bound on a block's CPU time (SECURITY.md "Out of scope: CPU time (bounded
// only by the host's wall clock)"), no longer bounds anything.
// On the current code the block prints ALIVE after ~9 s of spinning; it must be stopped at its
// timeout (plus the kill's grace).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness, lastChatMessage } from '../agent/harness.js'

test('a block cannot outlive its timeout by asking for approvals one after another', async () => {
  const h = await harness({
    config: { blockTimeoutMs: 800, approvals: { auto: 'ask', timeoutMs: 300, rules: [] } },
  })
  try {
    const rs = await h.engine.runtimeSession(h.sessionId)
    await rs.bind('deploy', async () => ({ ok: true }), {
      doc: 'Deploy.',
      signature: '(env)',
      approval: 'required',
    })
    const code = `import threading, time
spins = [0]
def work():
    while True:
        spins[0] += 1          # stands for any CPU work the block wants to do
threading.Thread(target=work, daemon=True).start()
t0 = time.monotonic()
for i in range(30):
    try:
        await deploy("prod")
    except Exception:
        pass
print('ALIVE after', round(time.monotonic() - t0, 1), 's, spins', spins[0])`
    h.double.script([{ calls: [pyCall(code)] }, (req) => ({ text: lastChatMessage(req.body).content })])
    const t0 = performance.now()
    const r = await h.agent.turn(h.sessionId, 'go')
    const ms = performance.now() - t0
    assert.doesNotMatch(
      r.answer ?? '',
      /ALIVE after/,
      `a block with an 800 ms timeout kept running ${Math.round(ms)} ms: ${r.answer}`,
    )
  } finally {
    await h.close()
  }
})
