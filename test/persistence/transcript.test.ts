import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Store, TranscriptBlock } from '../../src/persistence/index.js'
import { exportTranscript, fence, renderMarkdown, TranscriptSchema } from '../../src/persistence/index.js'
import { BACKENDS, openTempStore } from './helpers.js'

// Every stamp a second apart, so the order of events is unambiguous and the output reproducible.
function ticking(): () => number {
  let t = Date.UTC(2026, 0, 2, 3, 4, 5)
  return () => (t += 1000)
}

// A session with a turn of two iterations, a turn that ran nothing, a block outside any turn,
// an error with a traceback, a result, attachments, and output that itself contains a fence.
function populate(store: Store): string {
  const s = store.sessions.create({ title: 'Sales\nanalysis', policy: { network: false } })
  const t1 = store.turns.start({ sessionId: s.id, request: 'Load the CSV\nand plot it' })
  const i1 = store.turns.addIteration(t1.id)
  const b1 = store.blocks.start({
    sessionId: s.id,
    code: 'rows = load()\nprint(len(rows))',
    turnId: t1.id,
    iterationId: i1.id,
  })
  store.blocks.finish(b1.block.id, { stdout: '42\n', result: { rows: 42 }, durationMs: 7 })
  const i2 = store.turns.addIteration(t1.id)
  const b2 = store.blocks.start({ sessionId: s.id, code: 'plot(rows)', turnId: t1.id, iterationId: i2.id })
  store.blocks.finish(b2.block.id, {
    stdout: 'Here is markdown:\n```python\nx = 1\n```\n',
    durationMs: 30,
    attachments: [
      { mediaType: 'image/png', name: 'plot.png', data: Buffer.from([137, 80, 78, 71]) },
      { mediaType: 'text/csv', data: Buffer.alloc(100_000, 65) },
    ],
  })
  store.turns.finish(t1.id, 'done')
  const t2 = store.turns.start({ sessionId: s.id, request: { kind: 'tool', name: 'noop' } })
  store.turns.finish(t2.id, 'cancelled')
  const b3 = store.blocks.start({ sessionId: s.id, code: '1/0' })
  store.blocks.finish(b3.block.id, {
    error: {
      code: 'python.exception',
      message: 'ZeroDivisionError: division by zero',
      traceback:
        'Traceback (most recent call last):\n  File "<block>", line 1\nZeroDivisionError: division by zero',
    },
    durationMs: 1,
    timedOut: false,
  })
  store.blocks.start({ sessionId: s.id, code: 'while True: pass' })
  return s.id
}

for (const backend of BACKENDS) {
  describe(backend, () => {
    test('the JSON transcript has the canonical shape and round-trips through text unchanged', () => {
      const store = openTempStore({ now: ticking() })
      const id = populate(store)
      const t = exportTranscript(store, id)
      const text = JSON.stringify(t)
      const back = TranscriptSchema.parse(JSON.parse(text))
      assert.deepEqual(back, t)
      assert.equal(JSON.stringify(back), text)
      // The same session exports to the same bytes.
      assert.equal(JSON.stringify(exportTranscript(store, id)), text)

      assert.equal(t.format, 'vis-transcript')
      assert.equal(t.session.title, 'Sales\nanalysis')
      assert.deepEqual(
        t.turns.map((x) => [x.position, x.status, x.iterations.length]),
        [
          [1, 'done', 2],
          [2, 'cancelled', 0],
        ],
      )
      assert.deepEqual(
        t.blocks.map((b) => [b.position, b.status, b.attachments.length]),
        [
          [1, 'done', 0],
          [2, 'done', 2],
          [3, 'done', 0],
          [4, 'running', 0],
        ],
      )
      assert.deepEqual(
        t.blocks[1]!.attachments.map((a) => [a.mediaType, a.storage, a.size]),
        [
          ['image/png', 'inline', 4],
          ['text/csv', 'file', 100_000],
        ],
      )
      assert.match(t.blocks[0]!.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.ok(!('data' in t.blocks[1]!.attachments[0]!), 'bytes are not exported')
      // The schema is strict: an unknown field or a wrong type is refused.
      assert.throws(() => TranscriptSchema.parse({ ...t, extra: 1 }))
      assert.throws(() => TranscriptSchema.parse({ ...t, blocks: [{ ...t.blocks[0], position: '1' }] }))
    })

    test('the Markdown transcript is rendered from the JSON shape, in order, with safe fences', () => {
      const store = openTempStore({ now: ticking() })
      const id = populate(store)
      const md = renderMarkdown(exportTranscript(store, id))
      const expectedOrder = [
        '# Sales analysis',
        '## Turn 1 (done)',
        '> Load the CSV\n> and plot it',
        '### Iteration 1',
        '#### Block 1 (ok, 7 ms)',
        '```python\nrows = load()\nprint(len(rows))\n```',
        'Output:\n\n```text\n42\n```',
        'Result:\n\n```json\n{\n  "rows": 42\n}\n```',
        '### Iteration 2',
        '#### Block 2 (ok, 30 ms)',
        // Output containing ``` is wrapped in a longer fence so it cannot close early.
        '````text\nHere is markdown:\n```python\nx = 1\n```\n````',
        '- `plot.png` (image/png, 4 bytes)',
        '- attachment 2 (text/csv, 100000 bytes)',
        '## Turn 2 (cancelled)',
        '"name": "noop"',
        '## Outside a turn',
        '#### Block 3 (failed, 1 ms)',
        'Error `python.exception`: ZeroDivisionError: division by zero',
        '```text\nTraceback (most recent call last):',
        '#### Block 4 (running)',
        '```python\nwhile True: pass\n```',
      ]
      let from = 0
      for (const piece of expectedOrder) {
        const at = md.indexOf(piece, from)
        assert.ok(at >= 0, `missing or out of order: ${JSON.stringify(piece)}\n---\n${md}`)
        from = at + piece.length
      }
      assert.ok(md.endsWith('```\n'))
      assert.ok(!md.includes('\n\n\n'), 'no runs of blank lines')
    })

    test('Markdown renders a hand-written transcript: multi-line errors fenced, turn continued after a detour', () => {
      const at = '2026-01-02T03:04:05.000Z'
      const block = (
        position: number,
        turnId: string | null,
        extra: Partial<TranscriptBlock> = {},
      ): TranscriptBlock => ({
        id: `b${position}`,
        position,
        turnId,
        iterationId: null,
        status: 'done',
        code: `step(${position})`,
        stdout: '',
        stderr: '',
        result: null,
        error: null,
        durationMs: 1,
        timedOut: false,
        createdAt: at,
        finishedAt: at,
        attachments: [],
        ...extra,
      })
      const t = TranscriptSchema.parse({
        format: 'vis-transcript',
        version: 1,
        session: { id: 's1', title: null, policy: {}, createdAt: at, closedAt: at },
        turns: [
          {
            id: 't1',
            position: 1,
            request: null,
            status: 'failed',
            createdAt: at,
            finishedAt: at,
            iterations: [],
          },
        ],
        blocks: [
          block(1, 't1', { error: { message: 'first line\nsecond line' }, timedOut: true, stderr: 'warn\n' }),
          block(2, null),
          block(3, 't1'),
        ],
      })
      const md = renderMarkdown(t)
      assert.ok(md.startsWith('# Session s1\n\n- Session: `s1`\n'))
      assert.ok(md.includes(`- Closed: ${at}\n`))
      assert.ok(md.includes('#### Block 1 (failed, 1 ms, timed out)'))
      assert.ok(md.includes('Standard error:\n\n```text\nwarn\n```'))
      assert.ok(md.includes('Error:\n\n```text\nfirst line\nsecond line\n```'))
      const order = [
        '## Turn 1 (failed)',
        '#### Block 1',
        '## Outside a turn',
        '#### Block 2',
        '## Turn 1 (continued)',
        '#### Block 3',
      ]
      let from = 0
      for (const piece of order) {
        const i = md.indexOf(piece, from)
        assert.ok(i >= 0, `missing or out of order: ${piece}\n${md}`)
        from = i
      }
      assert.equal(fence('a ```` b'), '`````\na ```` b\n`````\n')
      // A display formatter changes only what is shown, never the transcript.
      const shown = renderMarkdown(t, { formatCode: (code) => code.replace('step', 'STEP') })
      assert.ok(shown.includes('```python\nSTEP(3)\n```'))
      assert.equal(t.blocks[2]!.code, 'step(3)')
    })
  })
}
