// ATTACK (surface 4, the per-session attachment budget; "many sessions, child turns"): the
// thirteenth pass bounded what the engine stores of a session's attachments (512 MiB a session,
// src/engine/attachment-budget.ts: "a loop of blocks would fill the host's disk 64 MiB at a
// time"). The sum is taken per SESSION (AttachmentsRepo.sessionBytes), and a block of an agent
// turn makes new sessions at will: every `sub_loop()` child is a fresh session (a fork of the
// parent's), with a fresh 512 MiB of its own. So the same loop, written `for i in range(n): await
// sub_loop(...)` with each child leaving its outbox full, stores n x 512 MiB in the vis home from
// one turn of one session; nothing bounds n but the model's budget (the turn's token budget is
// shared with its children; its attachments are not). The outbox files may be sparse, so the
// jail's disk budget never sees them.
// Here (a real engine, its agent against the provider double, as test/agent/sub-loop.test.ts
// does): the engine keeps 1 MiB a session; the parent's block runs four children in turn, each
// leaving one sparse 768 KiB file in its outbox. On the current code every child keeps its
// file: 3 MiB stored from one turn under a 1 MiB bound. Both directions: a single child's
// attachment, within the bound, is stored.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadAgentConfig } from '../../src/agent/config.js'
import { agentFor } from '../../src/agent/index.js'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { ProviderDouble, pyCall, type Recorded, type Scripted } from '../agent/double.js'
import { python } from '../agent/harness.js'

const KiB = 1024
const CHILDREN = 4

const leave = (tag: string) =>
  `import os\nwith open(os.path.join(VIS_OUTBOX, "${tag}.bin"), "wb") as f:\n    f.truncate(${768 * KiB})\nprint("OUTBOX-" + "FILLED")`

function route(req: Recorded): Scripted {
  const b = JSON.stringify(req.body)
  if (b.includes('PARENT-TASK')) {
    if (b.includes('ANSWERS')) return { text: 'parent done' }
    return {
      calls: [
        pyCall(
          `r = []\nfor i in range(${CHILDREN}):\n    r.append(await sub_loop(f"CHILD-{i}-TASK"))\nprint("ANS" + "WERS", r)`,
        ),
      ],
    }
  }
  for (let i = 0; i < CHILDREN; i++) {
    if (b.includes(`CHILD-${i}-TASK`)) {
      if (b.includes('OUTBOX-FILLED')) return { text: `answer-${i}` }
      return { calls: [pyCall(leave(`child${i}`))] }
    }
  }
  return { text: 'unrouted' }
}

test("sub_loop children do not multiply a session's attachment bound", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-attach-subloop-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-attach-subloop-root-'))
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  let engine: Engine | undefined
  try {
    engine = await createEngine({
      home,
      python,
      pool: { size: 0 },
      extensions: false,
      maxSessionAttachmentsMb: 1,
    })
    const config = loadAgentConfig({
      home,
      overrides: {
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-double' } },
        model: 'openai/double-model',
        stallMs: 2_000,
        backoffMs: [20, 40],
        subLoops: { concurrency: 1, timeoutMs: 600_000, maxDepth: 1 },
      },
    })
    const agent = agentFor(engine, config)
    const s = await engine.createSession({ roots: [root] })
    double.script([], (req) => route(req))
    const r = await agent.turn(s.id, 'PARENT-TASK: ask helpers')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.children.length, CHILDREN)
    const stored = (session: string) =>
      engine!.store.attachments.listBySession(session).reduce((n, a) => n + a.size, 0)
    const perChild = r.children.map((c) => stored(c.session_id))
    // Allowed: the first child's attachment, within the bound, is kept.
    assert.equal(perChild[0], 768 * KiB)
    const total = stored(s.id) + perChild.reduce((n, x) => n + x, 0)
    assert.ok(
      total <= 1024 * KiB,
      `one turn of a session with a 1 MiB attachment bound stored ${Math.round(total / KiB)} KiB of attachments ` +
        `through ${CHILDREN} sub_loop children (per child: ${perChild.map((x) => `${x / KiB} KiB`).join(', ')})`,
    )
  } finally {
    await engine?.close()
    await double.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
})
