import type { Engine } from '../engine/engine.js'
import type { EventView } from '../engine/schemas.js'
import { VisError } from '../util/errors.js'
import { kebabAlias } from '../util/event-names.js'
import { type BudgetedStream, SseBudget } from './sse-budget.js'

export type SseOptions = {
  // A comment line this often keeps proxies from timing the stream out, and makes a write
  // that finds a dead client (the socket closes, the stream is cancelled, we clean up).
  heartbeatMs: number
  // A client this many frames behind is dropped: it can reconnect with Last-Event-ID.
  maxQueuedFrames: number
  // ...or this many bytes behind: a frame carries what the sandbox chose (a block's output and
  // value, up to the caps), so a count alone lets one stalled reader hold gigabytes.
  maxQueuedBytes: number
  // The bytes queued for all the server's streams together, and per session (sse-budget.ts):
  // without it N stalled readers hold N times maxQueuedBytes. One per server (app.ts).
  budget?: SseBudget
  // Called when a client is dropped for falling behind: closes its connection, so the bytes
  // already handed to the socket go too (the route passes the node response's destroy).
  onDrop?: () => void
}

// Defaults for the server's streams (app.ts); a test may lower them.
export const DEFAULT_MAX_QUEUED_FRAMES = 10_000
export const DEFAULT_MAX_QUEUED_BYTES = 16 * 1024 * 1024

const encoder = new TextEncoder()

// A live event reaches every stream of its session as the same object (event-log.ts notify): it
// is encoded once and the bytes shared, so N streams hold one copy of a frame, not N.
const encodedFrames = new WeakMap<EventView, Uint8Array>()
const encodeFrame = (ev: EventView): Uint8Array => {
  let bytes = encodedFrames.get(ev)
  if (!bytes) {
    bytes = encoder.encode(frame(ev))
    encodedFrames.set(ev, bytes)
  }
  return bytes
}
const HEARTBEAT = encoder.encode(': heartbeat\n\n')

// Events read from the log per replay step: a frame may weigh a few MiB (a block's output and
// value), so a step is kept small, and the next one waits for the socket to take the last.
const REPLAY_PAGE = 16

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
  // Without a server's budget (a stream made on its own), a budget of its own: no worse than before.
  const budget = opts.budget ?? new SseBudget(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)
  let dropMe = () => {}
  const me: BudgetedStream = { sessionId, bytes: 0, drop: () => dropMe() }
  // Frames wait here, not in the stream's own queue, so that both their count and their bytes
  // are known when one is added and when the socket takes one (pull).
  const queue: Uint8Array[] = []
  let queuedBytes = 0
  let closing = false
  let wake: (() => void) | undefined
  let replaying = true
  let replayPage = () => {}
  // The bytes of the frame last handed to the HTTP adapter. It writes a frame to the socket and
  // asks for the next one (pull) only once the socket took it (`drain`): for a reader that stopped
  // reading, that frame sits in the socket's write buffer for the connection's life. So it stays
  // charged to the budget until the next pull (fifteenth outsider pass: 160 readers replaying a
  // session from the start and stalling pinned a fresh ~2 MB frame each, 139 MiB the budget never
  // saw).
  let handed = 0
  const deliver = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const chunk = queue.shift()
    if (chunk) {
      queuedBytes -= chunk.byteLength
      handed = chunk.byteLength
      controller.enqueue(chunk)
    } else if (closing) {
      budget.unregister(me)
      controller.close()
    }
  }
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let last = after
        let ended = false
        const end = () => {
          if (ended) return
          ended = true
          cleanup()
          closing = true
          wake?.()
        }
        // Too far behind: the queued frames are discarded and the connection closed; the
        // client reconnects with Last-Event-ID and the log replays what it missed.
        // A stream that has ended (session closed) but still holds frames for a stalled reader
        // can be dropped too: the server's budget may need its bytes.
        let dropped = false
        const drop = () => {
          if (dropped) return
          dropped = true
          if (!ended) cleanup()
          ended = true
          queue.length = 0
          queuedBytes = 0
          budget.unregister(me)
          // Closing the connection cancels the stream; without one to close, erroring it does.
          if (opts.onDrop) {
            opts.onDrop()
            return
          }
          try {
            controller.error(new Error('event stream client fell too far behind'))
          } catch {
            // Already cancelled.
          }
        }
        dropMe = drop
        // `live`: frames the log pushes; a live frame past this stream's bounds or the server's
        // (budget) drops the client. The replay's own frames come only when the socket asks for
        // more (pull): one that does not fit waits for the next pull (false) instead, so a
        // reconnect's backlog never drops it, and a stream that holds nothing always takes one.
        // `always`: the replay's gap notice, which must not be lost (it is a few bytes).
        // Whether `size` more bytes may be queued (charged to the budget when they may).
        const admit = (size: number, live: boolean, always: boolean): boolean => {
          const over = queue.length >= opts.maxQueuedFrames || queuedBytes + size > opts.maxQueuedBytes
          if (live) {
            if (over || !budget.take(me, size)) {
              drop()
              return false
            }
          } else if (queue.length === 0 || always) {
            budget.take(me, size, true)
          } else if (over || !budget.take(me, size)) {
            return false
          }
          return true
        }
        const push = (bytes: Uint8Array) => {
          queue.push(bytes)
          queuedBytes += bytes.byteLength
          wake?.()
        }
        const write = (bytes: Uint8Array, live = true, always = false): boolean => {
          if (ended) return true
          if (!admit(bytes.byteLength, live, always)) return false
          push(bytes)
          return true
        }
        const send = (ev: EventView, live: boolean): boolean => {
          if (ev.id <= last) return true
          if (live) {
            if (!write(encodeFrame(ev), true)) return false
          } else if (!ended) {
            // A replayed event is this stream's own: its frame is encoded only once admitted, so a
            // frame the budget turns away leaves no bytes behind (160 stalled readers pulling a
            // replay made ~2 MB of refused frames each step, garbage the budget never saw).
            const text = frame(ev)
            if (!admit(Buffer.byteLength(text), false, false)) return false
            push(encoder.encode(text))
          }
          last = ev.id
          if (ev.type === 'session.closed') end()
          return true
        }
        // Until the replay has caught up, live events are left to it: they are in the log by
        // the time they are notified, and the replay reads them in order.
        const unsubscribe = engine.subscribe(sessionId, (ev) => {
          if (!replaying) send(ev, true)
        })
        const heartbeat = setInterval(() => write(HEARTBEAT), opts.heartbeatMs)
        heartbeat.unref()
        budget.register(me)
        cleanup = () => {
          clearInterval(heartbeat)
          unsubscribe()
        }
        let first = true
        replayPage = () => {
          const page = engine.replayEvents(sessionId, last, REPLAY_PAGE)
          if (first && page.gap && after > 0) {
            write(
              encoder.encode(
                `event: gap\ndata: ${JSON.stringify({ after, oldest: page.events[0]?.id ?? null })}\n\n`,
              ),
              false,
              true,
            )
          }
          first = false
          let whole = true
          for (const ev of page.events) {
            if (!send(ev, false)) {
              // No room now: the rest of the page is read again at the next pull.
              whole = false
              break
            }
          }
          if (whole && page.events.length < REPLAY_PAGE) {
            replaying = false
            if (!ended && engine.sessionView(sessionId).state === 'closed') end()
          }
        }
        // Tells EventSource how soon to reconnect, and flushes the headers at once.
        write(encoder.encode('retry: 1000\n\n'), false)
        replayPage()
      },
      // The socket wants a frame: one is handed over now, or as soon as one is written.
      pull(controller) {
        budget.release(me, handed)
        handed = 0
        if (queue.length === 0 && replaying && !closing) replayPage()
        if (queue.length > 0 || closing) {
          deliver(controller)
          return
        }
        return new Promise<void>((resolve) => {
          wake = () => {
            wake = undefined
            deliver(controller)
            resolve()
          }
        })
      },
      cancel() {
        // The client went away.
        queue.length = 0
        queuedBytes = 0
        budget.unregister(me)
        cleanup()
      },
    },
    { highWaterMark: 0 },
  )
  return new Response(body, { headers: STREAM_HEADERS })
}
