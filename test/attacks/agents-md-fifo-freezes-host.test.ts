// ATTACK (in scope: denial of service of the HOST, not of the worker by itself): at every turn
// the host reads each root's AGENTS.md/CLAUDE.md with a SYNCHRONOUS `readFileSync`
// (src/agent/instructions.ts `projectInstructions`, called from the agent host on the event
// loop that serves every session, the HTTP API and the page). A block makes `AGENTS.md` a FIFO
// (`os.mkfifo`, allowed in a root) and starts a turn (`sub_loop`, or the next turn of
// `vis chat`/an HTTP client): the host's open() of the FIFO blocks until a writer comes, so
// the whole host process stops, every session with it, for as long as the sandbox likes (here
// it releases it after 3 s so the test ends; it could simply never open the other end). The
// other file tools open with O_NONBLOCK and refuse what is not a regular file; this read does
// neither.
//
// Reproduction: the parent's block runs `os.mkfifo('AGENTS.md')`, starts a thread that waits
// until the host holds the FIFO open (a non-blocking open for writing stops failing with
// ENXIO), keeps it waiting 3 s, then writes and closes; then it calls sub_loop(). The test
// measures the host's event-loop stall with a 50 ms interval timer.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pyCall } from '../agent/double.js'
import { harness } from '../agent/harness.js'

test("a FIFO planted as AGENTS.md does not stop the host's event loop", async () => {
  const h = await harness({ config: { subLoops: { concurrency: 2, timeoutMs: 120_000, maxDepth: 2 } } })
  let maxStall = 0
  let last = Date.now()
  const timer = setInterval(() => {
    const now = Date.now()
    maxStall = Math.max(maxStall, now - last - 50)
    last = now
  }, 50)
  try {
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('CHILD-TASK')) return { text: 'child done' }
      if (b.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            `import os, threading, time
os.mkfifo('AGENTS.md')
held = []
def hold():
    until = time.monotonic() + 20
    while time.monotonic() < until:
        try:
            fd = os.open('AGENTS.md', os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.05)
            continue
        held.append(time.monotonic())
        time.sleep(3)
        os.write(fd, b'# hi\\n')
        os.close(fd)
        return
threading.Thread(target=hold, daemon=True).start()
try:
    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK: say hi'))
except Exception as e:
    print('PARENT-' + 'DONE refused', str(e)[:200])
print('host held the FIFO open:', bool(held))`,
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.ok(
      maxStall < 1500,
      `the host's event loop stood still for ${maxStall} ms while the sandbox held its FIFO AGENTS.md`,
    )
  } finally {
    clearInterval(timer)
    await h.close()
  }
})
