import type { Engine } from '../engine/engine.js'
import type { EventView } from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { kebabAlias } from '../util/event-names.js'

export type SseOptions = {
  // A comment line this often keeps proxies from timing the stream out, and makes a write
  // that finds a dead client (the socket closes, the stream is cancelled, we clean up).
  heartbeatMs: number
  // A client this many frames behind is dropped: it can reconnect with Last-Event-ID.
  maxQueuedFrames: number
}

const encoder = new TextEncoder()

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
}

// An event renamed in 0.2 (block-started is block.started now) is followed, until 0.3, by a copy
// under its old name for clients listening for that: the same data, `event:` the kebab name, and
// no `id:`, so it moves no client's replay point (an EventSource keeps the last id it saw) and a
// client that reads ids counts each event once.
const frame = (ev: EventView): string => {
  const data = JSON.stringify(ev)
  const alias = kebabAlias(ev.type)
  const main = `id: ${ev.id}\nevent: ${ev.type}\ndata: ${data}\n\n`
  return alias === undefined ? main : `${main}event: ${alias}\ndata: ${data}\n\n`
}

// The replay point: Last-Event-ID (what an EventSource sends on reconnect) or ?after=.
export function parseLastEventId(header: string | undefined, query: string | undefined): number {
  const raw = header ?? query
  if (raw === undefined || raw === '') return 0
  if (!/^\d{1,15}$/.test(raw.trim())) {
    if (header !== undefined) {
      throw new VisError('http.invalid-header', 'Last-Event-ID must be a non-negative integer event id.', {
        header: 'Last-Event-ID',
        lastEventId: raw,
      })
    }
    throw new VisError(
      'http.invalid-query',
      'Invalid query parameter after: a non-negative integer event id.',
      {
        parameters: ['after'],
        after: raw,
      },
    )
  }
  return Number(raw.trim())
}

// A replay point past the session's last event names no event it ever sent: every later event
// would count as "already seen" and be dropped, so the stream would stay silent for good. Said
// instead, as the header or the parameter that carried it. (A closed session answers 204 first.)
export function refuseBeyondLastEvent(
  after: number,
  fromHeader: boolean,
  sessionId: string,
  lastEventId: number,
): void {
  if (after <= lastEventId) return
  const why =
    `is beyond the last event of session ${sessionId} (${lastEventId}): no event has that id. ` +
    'Reconnect without it to replay the whole stream, or with the id of an event you received.'
  if (fromHeader) {
    throw new VisError('http.invalid-header', `Last-Event-ID ${after} ${why}`, {
      header: 'Last-Event-ID',
      lastEventId: after,
      sessionId,
      last_event_id: lastEventId,
    })
  }
  throw new VisError('http.invalid-query', `Invalid query parameter after: ${after} ${why}`, {
    parameters: ['after'],
    after,
    sessionId,
    last_event_id: lastEventId,
  })
}

// One session's events as Server-Sent Events: first everything after `after` from the store,
// then live ones, each exactly once, in id order. Replay and subscription happen in one tick,
// and the log appends and notifies in one tick, so nothing falls between them.
export function sessionEventStream(
  engine: Engine,
  sessionId: string,
  after: number,
  opts: SseOptions,
  // A HEAD request: the headers only. Hono answers HEAD from the GET handler and drops the body
  // without cancelling it, so a stream made for it would keep its subscription forever.
  headOnly = false,
): Response {
  // Fails with session.not-found before any stream exists.
  engine.sessionView(sessionId)
  if (headOnly) return new Response(null, { headers: STREAM_HEADERS })
  let cleanup = () => {}
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let last = after
        let ended = false
        const end = () => {
          if (ended) return
          ended = true
          cleanup()
          try {
            controller.close()
          } catch {
            // Already closed or cancelled.
          }
        }
        const write = (text: string) => {
          if (ended) return
          if ((controller.desiredSize ?? 0) < -opts.maxQueuedFrames) {
            end()
            return
          }
          controller.enqueue(encoder.encode(text))
        }
        const send = (ev: EventView) => {
          if (ev.id <= last) return
          last = ev.id
          write(frame(ev))
          if (ev.type === 'session.closed') end()
        }
        const unsubscribe = engine.subscribe(sessionId, send)
        const heartbeat = setInterval(() => write(': heartbeat\n\n'), opts.heartbeatMs)
        heartbeat.unref()
        cleanup = () => {
          clearInterval(heartbeat)
          unsubscribe()
        }
        // Tells EventSource how soon to reconnect, and flushes the headers at once.
        write('retry: 1000\n\n')
        for (let first = true; !ended; first = false) {
          const page = engine.replayEvents(sessionId, last, 500)
          if (first && page.gap && after > 0) {
            write(`event: gap\ndata: ${JSON.stringify({ after, oldest: page.events[0]?.id ?? null })}\n\n`)
          }
          for (const ev of page.events) send(ev)
          if (page.events.length < 500) break
        }
        if (engine.sessionView(sessionId).state === 'closed' && !ended) end()
      },
      cancel() {
        // The client went away.
        cleanup()
      },
    },
    { highWaterMark: 1, size: () => 1 },
  )
  return new Response(body, { headers: STREAM_HEADERS })
}
