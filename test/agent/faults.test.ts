// Faults on the model's side, injected by the provider double on the real wire: each ends the
// way the issue says (retried, or the turn ends with a clear error), with real sessions behind.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pyCall } from './double.js'
import { harness, lastChatMessage, until } from './harness.js'

const retries = (h: Awaited<ReturnType<typeof harness>>) => h.events.filter((e) => e.type === 'model.retry')

test('429 with retry-after is retried after the time the server asked for', async () => {
  const h = await harness()
  try {
    h.double.script([{ fault: { kind: 'status', status: 429, retryAfter: '1' } }, { text: 'after the wait' }])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'after the wait')
    assert.equal(h.double.requests.length, 2)
    const [retry] = retries(h)
    assert.equal(retry?.code, 'agent.model-http-429')
    assert.equal(retry?.wait_ms, 1000)
    assert.equal(retry?.retrying, true)
    // The second request came no sooner than the server allowed.
    assert.ok(h.double.requests[1]!.at - h.double.requests[0]!.at >= 990)
  } finally {
    await h.close()
  }
})

test('three 500s in a row end the turn with a clear error; one 500 is retried', async () => {
  const h = await harness()
  try {
    const e500 = { fault: { kind: 'status' as const, status: 500, message: 'upstream exploded' } }
    h.double.script([e500, { text: 'recovered' }])
    const ok = await h.agent.turn(h.sessionId, 'one')
    assert.equal(ok.status, 'done')
    assert.equal(ok.answer, 'recovered')

    h.double.script([e500, e500, e500, { text: 'never asked' }])
    const r = await h.agent.turn(h.sessionId, 'two')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.model-http-500')
    assert.match(
      r.error!.message,
      /^The model request failed: 3 failures in a row; the last: openai answered HTTP 500: server_error: upstream exploded$/,
    )
    assert.equal(h.double.requests.length, 2 + 3)
    assert.equal(h.double.remaining, 1)
    assert.equal(h.agent.getTurn(h.sessionId, r.id).status, 'failed')
  } finally {
    await h.close()
  }
})

test('a client error (401) is not retried', async () => {
  const h = await harness()
  try {
    h.double.script([{ fault: { kind: 'status', status: 401, message: 'bad key' } }, { text: 'unused' }])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.model-http-401')
    assert.match(r.error!.message, /bad key/)
    assert.equal(h.double.requests.length, 1)
  } finally {
    await h.close()
  }
})

test('a stream that stalls before its first byte is aborted and retried once; twice ends the turn', async () => {
  const h = await harness({ config: { stallMs: 1500 } })
  try {
    const stall = { fault: { kind: 'stall-before-first-byte' as const } }
    h.double.script([stall, { text: 'second try' }])
    const ok = await h.agent.turn(h.sessionId, 'one')
    assert.equal(ok.status, 'done', JSON.stringify(ok.error))
    assert.equal(ok.answer, 'second try')
    assert.equal(retries(h)[0]?.code, 'agent.model-stalled')

    h.double.script([stall, stall, { text: 'never asked' }])
    const r = await h.agent.turn(h.sessionId, 'two')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.model-stalled')
    assert.match(r.error!.message, /stalled twice \(1500 ms without data\)/)
    assert.equal(h.double.remaining, 1)
  } finally {
    await h.close()
  }
})

test('a stream cut mid-way is retried and the whole reply is used', async () => {
  const h = await harness()
  try {
    h.double.script([
      { text: 'this reply will be cut in the middle', fault: { kind: 'cut-mid-stream' } },
      { text: 'whole' },
    ])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'whole')
    assert.equal(retries(h)[0]?.code, 'agent.model-unreachable')
    assert.equal(r.iterations.length, 1)
  } finally {
    await h.close()
  }
})

test('three empty replies in a row end the turn; one is asked again', async () => {
  const h = await harness()
  try {
    h.double.script([{}, { text: 'there you go' }])
    const ok = await h.agent.turn(h.sessionId, 'one')
    assert.equal(ok.answer, 'there you go')
    assert.equal(ok.iterations.length, 2)

    h.double.script([{}, {}, {}, { text: 'never asked' }])
    const r = await h.agent.turn(h.sessionId, 'two')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.empty-replies')
    assert.match(r.error!.message, /3 empty replies in a row/)
    assert.doesNotMatch(r.error!.message, /token limit/)
    assert.equal(h.double.remaining, 1)
  } finally {
    await h.close()
  }
})

test('empty replies that reached the output token limit end the turn saying so, and what to change', async () => {
  const h = await harness()
  try {
    // Empty because the limit was spent (a reasoning model thinking it all away): said, with the fix.
    const spent = { maxTokens: true, usage: { output: 4096, reasoning: 4096 } }
    h.double.script([spent, spent, spent])
    const cut = await h.agent.turn(h.sessionId, 'three')
    assert.equal(cut.error?.code, 'agent.empty-replies')
    assert.match(
      cut.error!.message,
      /The last one reached the output token limit \(stop: length\) before writing anything: raise the model's output limit\.$/,
    )
  } finally {
    await h.close()
  }
})

test('malformed tool-call JSON is answered with the error, nothing runs, the turn goes on', async () => {
  const h = await harness()
  try {
    h.double.script([
      { calls: [{ args: '{"code": "print(1)' }] },
      (req) => {
        const m = lastChatMessage(req.body)
        assert.equal(m.role, 'tool')
        assert.match(
          m.content,
          /^✗ tool-call error: the arguments were not valid JSON \(.+\)\. Call python_execution again with arguments \{"code": "<python source>"\}\.$/,
        )
        return { calls: [{ args: '{"script": "print(1)"}' }] }
      },
      (req) => {
        assert.match(
          lastChatMessage(req.body).content,
          /^✗ tool-call error: the arguments need a string "code"/,
        )
        return { calls: [{ name: 'bash', args: '{"code": "ls"}' }] }
      },
      (req) => {
        assert.match(lastChatMessage(req.body).content, /^✗ tool error: there is no tool named "bash"/)
        return { text: 'gave up' }
      },
    ])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'gave up')
    assert.equal(h.double.requests.length, 4)
    assert.equal(h.engine.getSession(h.sessionId).blocks.length, 0)
  } finally {
    await h.close()
  }
})

test('the iteration cap asks once, without tools, for the best answer', async () => {
  const h = await harness()
  try {
    h.double.script([], (req) =>
      req.body.tool_choice === 'none'
        ? { text: 'best answer so far: 3 blocks ran' }
        : { calls: [pyCall('print("again")')] },
    )
    const r = await h.agent.turn(h.sessionId, 'loop forever', { maxIterations: 3 })
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.answer, 'best answer so far: 3 blocks ran')
    assert.equal(h.double.requests.length, 4)
    assert.deepEqual(
      h.double.requests.map((q) => q.body.tool_choice),
      ['auto', 'auto', 'auto', 'none'],
    )
    const last = h.double.requests[3]!.body
    assert.equal(lastChatMessage(last).role, 'user')
    assert.match(
      lastChatMessage(last).content,
      /^You have used all 3 iterations of this turn\. Do not run any more code/,
    )
    assert.equal(h.engine.getSession(h.sessionId).blocks.length, 3)
    assert.equal(r.iterations.length, 4)
  } finally {
    await h.close()
  }
})

// What the last request carried as the result of the cut call, in each dialect's own shape.
const lastToolResult = (dialect: string, body: any): string => {
  if (dialect === 'chat') return lastChatMessage(body).content
  if (dialect === 'responses') return body.input.at(-1).output
  const block = body.messages.at(-1).content.find((b: any) => b.type === 'tool_result')
  return block.content.map((p: any) => p.text).join('')
}

for (const [model, dialect, stop] of [
  ['openai/double-model', 'chat', 'length'],
  ['anthropic/double-model', 'anthropic', 'max_tokens'],
  ['openai-responses/double-model', 'responses', 'max_output_tokens'],
] as const) {
  test(`${dialect}: a call cut by the output token limit is not run; the model is told why (stop: ${stop}), also after a restart`, async () => {
    const h = await harness({ config: { model } })
    try {
      const cutMessage = new RegExp(
        `^✗ tool-call error: your reply reached the output token limit \\(stop: ${stop}\\) before this call's arguments were complete; nothing ran\\. Send a shorter block`,
      )
      h.double.script([
        {
          text: 'Writing it.',
          calls: [{ args: "{\"code\": \"open('big.txt', 'w').write('aaaa" }],
          maxTokens: true,
        },
        (req) => {
          assert.match(lastToolResult(dialect, req.body), cutMessage)
          return { calls: [pyCall('print("short")')] }
        },
        { text: 'done in parts' },
      ])
      const r = await h.agent.turn(h.sessionId, 'write a big file')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, 'done in parts')
      assert.equal(r.iterations[0]!.stop, stop)
      // Only the short block ran.
      const blocks = h.engine.getSession(h.sessionId).blocks
      assert.equal(blocks.length, 1)
      // A restart rebuilds the same message for the cut call.
      await h.restart()
      h.double.script([
        (req) => {
          const body = JSON.stringify(req.body)
          assert.ok(body.includes('reached the output token limit'), 'the rebuilt history keeps the notice')
          return { text: 'again' }
        },
      ])
      const again = await h.agent.turn(h.sessionId, 'and now?')
      assert.equal(again.status, 'done', JSON.stringify(again.error))
    } finally {
      await h.close()
    }
  })
}

test('malformed JSON in a reply that was not cut is still a JSON mistake, not the token limit', async () => {
  const h = await harness()
  try {
    h.double.script([
      { calls: [{ args: '{"code": print(1)}' }] },
      (req) => {
        const m = lastChatMessage(req.body).content
        assert.match(m, /^✗ tool-call error: the arguments were not valid JSON/)
        assert.doesNotMatch(m, /token limit/)
        return { text: 'ok' }
      },
    ])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(r.iterations[0]!.stop, 'tool_calls')
  } finally {
    await h.close()
  }
})

for (const [model, dialect, type] of [
  ['anthropic/double-model', 'anthropic', 'overloaded_error'],
  ['openai-responses/double-model', 'responses', 'server_error'],
  ['openai/double-model', 'chat', 'server_error'],
] as const) {
  test(`${dialect}: an error the server reports inside the stream (${type}) is retried, named with its type and message`, async () => {
    const h = await harness({ config: { model } })
    try {
      const broken = {
        text: 'half of it',
        fault: { kind: 'stream-error' as const, type, message: 'Overloaded' },
      }
      h.double.script([broken, { text: 'whole' }])
      const r = await h.agent.turn(h.sessionId, 'hi')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, 'whole')
      const [retry] = retries(h)
      assert.equal(retry?.code, 'agent.model-stream-error')
      assert.equal(
        retry?.message,
        `${dialect === 'chat' ? 'openai' : model.split('/')[0]} reported an error in the stream: ${type}: Overloaded`,
      )
      assert.equal(retry?.retrying, true)
      assert.equal(retry?.wait_ms, 20)

      // Three in a row end the turn with that error.
      h.double.script([broken, broken, broken])
      const failed = await h.agent.turn(h.sessionId, 'again')
      assert.equal(failed.status, 'failed')
      assert.equal(failed.error?.code, 'agent.model-stream-error')
      assert.match(
        failed.error!.message,
        new RegExp(`3 failures in a row; the last: .* ${type}: Overloaded$`),
      )
    } finally {
      await h.close()
    }
  })
}

test('anthropic: 529 overloaded_error is retried after the backoff', async () => {
  const h = await harness({ config: { model: 'anthropic/double-model' } })
  try {
    h.double.script([{ fault: { kind: 'status', status: 529, message: 'Overloaded' } }, { text: 'fine now' }])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    const [retry] = retries(h)
    assert.equal(retry?.code, 'agent.model-http-529')
    // The body's type and message, not the status twice and the raw JSON body.
    assert.equal(retry!.message, 'anthropic answered HTTP 529: overloaded_error: Overloaded')
    assert.equal(retry?.wait_ms, 20)
  } finally {
    await h.close()
  }
})

for (const model of ['openai/double-model', 'anthropic/double-model', 'openai-responses/double-model']) {
  test(`${model.split('/')[0]}: a stream that goes silent half-way is aborted after stallMs and retried; the answer is the retry's whole reply`, async () => {
    const h = await harness({ config: { model, stallMs: 1500 } })
    try {
      h.double.script([
        { text: 'the first half and the second', fault: { kind: 'stall-mid-stream' } },
        { text: 'all of it' },
      ])
      const r = await h.agent.turn(h.sessionId, 'hi')
      assert.equal(r.status, 'done', JSON.stringify(r.error))
      assert.equal(r.answer, 'all of it')
      const [retry] = retries(h)
      assert.equal(retry?.code, 'agent.model-stalled')
      assert.equal(retry?.retrying, true)
      // Some of the first reply had streamed before the silence.
      assert.ok(h.events.some((e) => e.type === 'model.delta'))
      assert.equal(h.double.requests.length, 2)
      assert.equal(r.iterations.length, 1)
    } finally {
      await h.close()
    }
  })
}

test('a cancel while the reply is streaming ends the turn cancelled, not done with the half that came', async () => {
  const h = await harness({ config: { model: 'anthropic/double-model', stallMs: 60_000 } })
  try {
    h.double.script([{ text: 'a long answer that never finishes', fault: { kind: 'stall-mid-stream' } }])
    const started = await h.agent.startTurn(h.sessionId, 'hi')
    await until('part of the reply streamed', () => h.events.some((e) => e.type === 'model.delta'))
    assert.equal(h.agent.cancel(h.sessionId, started.turnId), true)
    const r = await started.done
    assert.equal(r.status, 'cancelled')
    assert.equal(r.answer, null)
    assert.equal(r.error?.code, 'turn.cancelled')
    assert.ok(!h.events.some((e) => e.type === 'model.retry'))
  } finally {
    await h.close()
  }
})

test('a 429 for an exhausted quota, or any error the server marks x-should-retry: false, is not retried; x-should-retry: true retries a 4xx', async () => {
  const h = await harness()
  try {
    const quota = {
      fault: {
        kind: 'status' as const,
        status: 429,
        type: 'insufficient_quota',
        message: 'You exceeded your current quota, please check your plan and billing details.',
      },
    }
    // Nothing scripted after the fault: a retry would meet the double's own 500.
    h.double.script([quota])
    const r = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(r.status, 'failed')
    assert.equal(r.error?.code, 'agent.model-http-429')
    assert.match(r.error!.message, /insufficient_quota: You exceeded your current quota/)
    assert.equal(h.double.requests.length, 1)
    assert.equal(retries(h).at(-1)?.retrying, false)

    h.double.script([{ fault: { kind: 'status', status: 503, shouldRetry: 'false' } }])
    const no = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(no.status, 'failed')
    assert.equal(no.error?.code, 'agent.model-http-503')
    assert.equal(h.double.requests.length, 2)

    h.double.script([{ fault: { kind: 'status', status: 400, shouldRetry: 'true' } }, { text: 'second try' }])
    const yes = await h.agent.turn(h.sessionId, 'hi')
    assert.equal(yes.status, 'done', JSON.stringify(yes.error))
    assert.equal(yes.answer, 'second try')
    assert.equal(h.double.requests.length, 4)
  } finally {
    await h.close()
  }
})
