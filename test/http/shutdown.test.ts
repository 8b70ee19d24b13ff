// Stopping the server (what `vis serve` does on SIGINT/SIGTERM) answers the requests it is in
// the middle of: a client waiting on a synchronous block gets the block's end as the engine stops
// it, not a connection cut with no reply; an event stream ends; close() resolves.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { openEvents, tempHome, testServer, waitFor } from './helpers.js'

const { home, root } = tempHome('http-shutdown')
const SLOW = 'import time\nprint("started", flush=True)\nwhile True:\n    time.sleep(0.02)'

let closeServer: (() => Promise<void>) | undefined
after(async () => {
  await closeServer?.()
})

test('a block a client waits on is answered when the server stops, and event streams end', async () => {
  const { server, call } = await testServer({ home, pool: { size: 1 } })
  closeServer = () => server.close()
  const created = await call('POST', '/v1/sessions', { roots: [root] })
  assert.equal(created.status, 201, created.text)
  const id = created.body.id as string
  const events = await openEvents(`${server.url}/v1/sessions/${id}/events`)
  const waiting = fetch(`${server.url}/v1/sessions/${id}/blocks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: SLOW }),
  }).then(
    async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }),
    (err: Error) => ({ failed: `${err.message}: ${(err.cause as Error | undefined)?.message}` }),
  )
  await events.waitFor((evs) => evs.some((e) => e.event === 'output'), 30_000, 'the block to run')
  await server.close()
  const answer = await waiting
  assert.ok('status' in answer, `the waiting client got no answer: ${JSON.stringify(answer)}`)
  // The block's own record: it ran, printed, and ended because its worker was stopped.
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  const block = answer.body as { status: string; stdout: string; error: { code: string } | null }
  assert.equal(block.status, 'done')
  assert.equal(block.stdout, 'started\n')
  assert.equal(block.error?.code, 'worker.closed', JSON.stringify(block.error))
  await waitFor(() => events.ended, 10_000, 'the event stream to end')
})
