// A client author's scenario, typed only by what /v1/openapi.json says (the types are generated
// from the live document by openapi-contract.test.ts before this file is type-checked and run).
// If the document and the server disagree, this fails to compile or fails to run.
import createClient from 'openapi-fetch'
import type { components, paths } from './generated/vis-api.js'

type Event = components['schemas']['Event']
type Block = components['schemas']['Block']
// What every declared error carries: assigned from the generated client's `error`, so a route
// whose 4xx is not declared with this schema fails to compile here.
type ApiError = components['schemas']['Error'] | undefined

export type ScenarioReport = {
  sessionId: string
  printed: string
  asyncFirstStatus: number
  asyncLocation: string | null
  polledResult: unknown
  polls: number
  retrySameId: boolean
  retryReplayedHeader: string | null
  reusedKeyStatus: number
  reusedKeyCode: string | undefined
  interrupt: components['schemas']['InterruptResult']
  interruptedCode: string | undefined
  closedState: string
  eventTypes: Event['type'][]
  afterCloseStatus: number
  // Errors as the generated client surfaces them: typed, with their status and stable code.
  typedErrors: { status: number; code: string | undefined }[]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export async function scenario(baseUrl: string, token: string): Promise<ScenarioReport> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } })
  const fail = (what: string, e: unknown): never => {
    throw new Error(`${what}: ${JSON.stringify(e)}`)
  }

  const created = await api.POST('/v1/sessions', { body: { title: 'typed client' } })
  const session = created.data ?? fail('create', created.error)
  const path = { id: session.id }

  const ran = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path },
    body: { code: 'x = 20\nprint("x is", x)' },
  })
  const printed = (ran.data ?? fail('run', ran.error)).stdout

  // Async: 202 at once, then poll the block's own URL.
  const accepted = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path, header: { Prefer: 'respond-async' } },
    body: { code: 'import time\ntime.sleep(0.2)\nx * 2 + 2', timeout_ms: 30_000 },
  })
  const asyncBlock = accepted.data ?? fail('async run', accepted.error)
  const poll = async (blockId: string, until: (b: Block) => boolean): Promise<[Block, number]> => {
    for (let n = 1; ; n++) {
      const r = await api.GET('/v1/sessions/{id}/blocks/{blockId}', {
        params: { path: { id: session.id, blockId } },
      })
      const b = r.data ?? fail('poll', r.error)
      if (until(b)) return [b, n]
      if (n > 2000) throw new Error(`block ${blockId} never got there: ${b.status}`)
      await sleep(10)
    }
  }
  const [finished, polls] = await poll(asyncBlock.id, (b) => b.status === 'done')

  // An idempotent retry returns the first block; the key reused for other code is refused.
  const key = { 'Idempotency-Key': 'typed-1' }
  const first = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path, header: key },
    body: { code: 'y = 1' },
  })
  const retry = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path, header: key },
    body: { code: 'y = 1' },
  })
  const reused = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path, header: key },
    body: { code: 'y = 2' },
  })

  // Interrupt a named block once it runs.
  const looping = await api.POST('/v1/sessions/{id}/blocks', {
    params: { path, header: { Prefer: 'respond-async' } },
    body: { code: 'import time\nwhile True:\n    time.sleep(0.01)' },
  })
  const loop = looping.data ?? fail('loop', looping.error)
  await poll(loop.id, (b) => b.status === 'running')
  const interrupted = await api.POST('/v1/sessions/{id}/interrupt', {
    params: { path },
    body: { block_id: loop.id },
  })
  const [stopped] = await poll(loop.id, (b) => b.status === 'done')

  // Errors surface as the typed Error: an unknown session, a body the server refuses, a closed session.
  const typedErrors: ScenarioReport['typedErrors'] = []
  const typed = (r: { error?: ApiError; response: Response }) => {
    const e: ApiError = r.error
    typedErrors.push({ status: r.response.status, code: e?.error.code })
  }
  typed(await api.GET('/v1/sessions/{id}', { params: { path: { id: 'ses_missing' } } }))
  typed(await api.POST('/v1/sessions/{id}/blocks', { params: { path }, body: { code: 'x', timeout_ms: 0 } }))
  typed(
    await api.GET('/v1/sessions/{id}/blocks/{blockId}', { params: { path: { ...path, blockId: 'blk_x' } } }),
  )

  const closed = await api.DELETE('/v1/sessions/{id}', { params: { path } })
  typed(await api.POST('/v1/sessions/{id}/blocks', { params: { path }, body: { code: '1' } }))

  // The whole stream, which ends at session.closed; then 204 from the last id on.
  const stream = await api.GET('/v1/sessions/{id}/events', { params: { path }, parseAs: 'text' })
  const text = stream.data ?? fail('events', stream.error)
  const events = text
    .split('\n\n')
    .map((frame) => frame.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as Event)
  const last = String(events.at(-1)?.id ?? 0)
  const after = await api.GET('/v1/sessions/{id}/events', {
    params: { path, header: { 'Last-Event-ID': last } },
  })

  return {
    sessionId: session.id,
    printed,
    asyncFirstStatus: accepted.response.status,
    asyncLocation: accepted.response.headers.get('location'),
    polledResult: finished.result,
    polls,
    retrySameId: (first.data?.id ?? 'a') === (retry.data?.id ?? 'b'),
    retryReplayedHeader: retry.response.headers.get('idempotent-replayed'),
    reusedKeyStatus: reused.response.status,
    reusedKeyCode: reused.error?.error.code,
    interrupt: interrupted.data ?? fail('interrupt', interrupted.error),
    interruptedCode: stopped.error?.code,
    closedState: (closed.data ?? fail('close', closed.error)).state,
    eventTypes: events.map((e) => e.type),
    afterCloseStatus: after.response.status,
    typedErrors,
  }
}
