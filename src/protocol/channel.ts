import type { Duplex } from 'node:stream'
import type { z } from 'zod'
import { isErrorCode } from '../util/error-catalogue.js'
import { type ErrorCode, VisError } from '../util/errors.js'
import { issuesText } from '../util/zod-issues.js'
import {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_FRAME_CHARS,
  encodeFrame,
  encodeFrameWithRaw,
  exceedsDepth,
  type FrameEvent,
  LineDecoder,
  RawJson,
  replyIdFromHead,
} from './framing.js'
import { type NotificationEnvelope, Reply, RequestEnvelope, type WireError } from './messages.js'

export type ChannelOptions = {
  // Names this end in log lines, e.g. "worker 4242".
  name: string
  log: (line: string) => void
  maxFrameChars?: number
  maxDepth?: number
  // Incoming request ops this end serves, each with the schema its message must satisfy.
  requests: Record<string, z.ZodTypeAny>
  onRequest: (op: string, msg: any) => unknown | Promise<unknown>
  // Incoming notifications; unknown ones are logged and dropped.
  notifications?: Record<string, z.ZodTypeAny>
  onNotification?: (op: string, msg: any) => void
  onClose?: (err?: Error) => void
  // A frame no honest peer sends (not JSON, not an object, no valid envelope, over the
  // frame cap, a reply to a request never made). The host retires a worker that does it:
  // only guest code writing on the socket itself gets there.
  onViolation?: (what: string) => void
}

export type ChannelStats = {
  malformed: number
  oversized: number
  tooDeep: number
  invalid: number
  unknownOp: number
  lateReplies: number
  strayReplies: number
}

type Pending = { op: string; resolve: (v: unknown) => void; reject: (e: Error) => void }

// Where a channel's lines go out; incoming text is handed to receive()/receiveLine().
export type LineSink = { write(text: string): void; end(): void }

// One end of the JSON-line wire. It numbers its own requests, matches replies by id,
// answers the peer's requests, and never lets a bad line take the process down: every
// problem is counted, logged, and (when the line named a request) answered with an error.
export class Channel {
  readonly stats: ChannelStats = {
    malformed: 0,
    oversized: 0,
    tooDeep: 0,
    invalid: 0,
    unknownOp: 0,
    lateReplies: 0,
    strayReplies: 0,
  }
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly decoder: LineDecoder
  private readonly maxDepth: number
  private closed = false

  private readonly onFrameBound = (ev: FrameEvent) => this.onFrame(ev)

  constructor(
    private readonly socket: LineSink,
    private readonly opts: ChannelOptions,
  ) {
    this.decoder = new LineDecoder(opts.maxFrameChars ?? DEFAULT_MAX_FRAME_CHARS)
    this.maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH
  }

  // A channel reading and writing a stream socket itself.
  static overSocket(socket: Duplex, opts: ChannelOptions): Channel {
    const ch = new Channel(socket, opts)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => ch.receive(chunk))
    socket.on('error', (err) => ch.shutdown(err))
    socket.on('close', () => ch.shutdown())
    return ch
  }

  // Raw incoming text, split into frames here.
  receive(chunk: string): void {
    this.decoder.push(chunk, this.onFrameBound)
  }

  // One whole incoming line (the addon's wire reader has already split them).
  receiveLine(line: string): void {
    this.decoder.push(`${line}\n`, this.onFrameBound)
  }

  get isClosed(): boolean {
    return this.closed
  }

  get pendingCount(): number {
    return this.pending.size
  }

  // Sends a request; the returned id lets the caller cancel it later.
  send(op: string, params: Record<string, unknown> = {}): { id: number; reply: Promise<unknown> } {
    const id = this.nextId++
    if (this.closed) {
      const err = new VisError('protocol.closed', `the ${this.opts.name} channel is closed`, { op })
      return { id, reply: Promise.reject(err) }
    }
    const reply = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { op, resolve, reject })
    })
    this.socket.write(encodeFrameWithRaw({ id, op, ...params }))
    return { id, reply }
  }

  request(op: string, params: Record<string, unknown> = {}): Promise<unknown> {
    return this.send(op, params).reply
  }

  notify(op: string, params: Record<string, unknown> = {}): void {
    if (!this.closed) this.socket.write(encodeFrame({ op, ...params }))
  }

  // Fails one pending request now; its reply, if it ever comes, is dropped as late.
  cancel(id: number, err: Error): boolean {
    const p = this.pending.get(id)
    if (!p) return false
    this.pending.delete(id)
    p.reject(err)
    return true
  }

  failAll(err: Error): void {
    const all = [...this.pending.values()]
    this.pending.clear()
    for (const p of all) p.reject(err)
  }

  close(): void {
    this.socket.end()
    this.shutdown()
  }

  shutdown(err?: Error): void {
    if (this.closed) return
    this.closed = true
    this.opts.onClose?.(err)
  }

  private violation(what: string): void {
    this.opts.onViolation?.(what)
  }

  private log(line: string): void {
    this.opts.log(`[${this.opts.name}] ${line}`)
  }

  private onFrame(ev: FrameEvent): void {
    if (ev.kind === 'oversized') {
      this.stats.oversized++
      this.violation('a frame over the size cap')
      this.log(`dropped an oversized frame of ${ev.chars} characters`)
      const id = replyIdFromHead(ev.head)
      if (id !== undefined) {
        this.cancel(
          id,
          new VisError(
            'protocol.frame-too-large',
            `the reply was ${ev.chars} characters, over the frame cap`,
            {
              chars: ev.chars,
            },
          ),
        )
      }
      return
    }
    let msg: unknown
    try {
      msg = JSON.parse(ev.line)
    } catch {
      this.stats.malformed++
      this.violation('a malformed frame')
      this.log(`dropped a malformed line: ${ev.line.slice(0, 120)}`)
      return
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      this.stats.malformed++
      this.violation('a malformed frame')
      this.log(`dropped a line that is not a JSON object: ${ev.line.slice(0, 120)}`)
      return
    }
    const obj = msg as Record<string, unknown>
    if (exceedsDepth(obj, this.maxDepth)) {
      this.stats.tooDeep++
      this.log(`dropped a frame nested deeper than ${this.maxDepth}`)
      this.answerBadRequest(obj, 'protocol.too-deep', `message nests deeper than ${this.maxDepth} levels`)
      if ('id' in obj && !('op' in obj) && typeof obj.id === 'number') {
        this.cancel(
          obj.id,
          new VisError('protocol.too-deep', `reply nests deeper than ${this.maxDepth} levels`),
        )
      }
      return
    }
    if ('op' in obj && 'id' in obj) this.onRequest(obj)
    else if ('id' in obj) this.onReply(obj)
    else if ('op' in obj) this.onNotification(obj)
    else {
      this.stats.malformed++
      this.violation('a malformed frame')
      this.log(`dropped a message with neither id nor op: ${ev.line.slice(0, 120)}`)
    }
  }

  private answerBadRequest(obj: Record<string, unknown>, code: ErrorCode, message: string): void {
    if (!('op' in obj)) return
    const env = RequestEnvelope.safeParse(obj)
    if (env.success) this.reply(env.data.id, { code, message })
  }

  private onRequest(obj: Record<string, unknown>): void {
    const env = RequestEnvelope.safeParse(obj)
    if (!env.success) {
      this.stats.malformed++
      this.violation('a malformed frame')
      this.log(`dropped a request with a bad envelope: ${JSON.stringify(obj).slice(0, 120)}`)
      return
    }
    const { id, op } = env.data
    const schema = Object.hasOwn(this.opts.requests, op) ? this.opts.requests[op] : undefined
    if (!schema) {
      this.stats.unknownOp++
      this.log(`refused unknown op ${JSON.stringify(op)} (id ${id})`)
      this.reply(id, { code: 'protocol.unknown-op', message: `unknown op ${JSON.stringify(op)}` })
      return
    }
    const parsed = schema.safeParse(obj)
    if (!parsed.success) {
      this.stats.invalid++
      const why = issuesText(parsed.error, '(root)')
      this.log(`refused invalid ${op} request (id ${id}): ${why}`)
      this.reply(id, { code: 'protocol.invalid', message: `invalid ${op} request: ${why}` })
      return
    }
    let result: unknown
    try {
      result = this.opts.onRequest(op, parsed.data)
    } catch (err) {
      this.reply(id, toWireError(err))
      return
    }
    if (result instanceof Promise) {
      result.then(
        (value) => this.replyOk(id, value),
        (err) => this.reply(id, toWireError(err)),
      )
    } else this.replyOk(id, result)
  }

  private replyOk(id: number, value: unknown): void {
    if (this.closed) return
    let line: string
    try {
      line =
        value instanceof RawJson
          ? encodeFrameWithRaw({ id, ok: true, value })
          : encodeFrame({ id, ok: true, value: value ?? null })
    } catch (err) {
      this.reply(id, { code: 'protocol.unencodable', message: `reply value cannot be sent: ${String(err)}` })
      return
    }
    this.socket.write(line)
  }

  private reply(id: number, error: WireError): void {
    if (!this.closed) this.socket.write(encodeFrame({ id, ok: false, error }))
  }

  private onReply(obj: Record<string, unknown>): void {
    // The hot path: `{id, ok: true, value}` exactly is what OkReply accepts, checked
    // without zod; every other reply goes through the schema.
    const parsed = isPlainOkReply(obj) ? { success: true as const, data: obj } : Reply.safeParse(obj)
    if (!parsed.success) {
      this.stats.malformed++
      this.violation('a malformed frame')
      this.log(`dropped a malformed reply: ${JSON.stringify(obj).slice(0, 120)}`)
      const id = typeof obj.id === 'number' ? obj.id : undefined
      if (id !== undefined)
        this.cancel(id, new VisError('protocol.invalid', 'the peer sent a malformed reply'))
      return
    }
    const r = parsed.data
    const p = this.pending.get(r.id)
    if (!p) {
      if (r.id < this.nextId) {
        this.stats.lateReplies++
        this.log(`dropped a late reply to request ${r.id} (finished or cancelled)`)
      } else {
        this.stats.strayReplies++
        this.violation('a reply to a request never made')
        this.log(`dropped a reply to request ${r.id}, which was never made`)
      }
      return
    }
    this.pending.delete(r.id)
    if (r.ok) p.resolve(r.value)
    else {
      const { code, message, ...rest } = r.error
      // The peer's code is data until checked: one the catalogue lacks is a bug on its side,
      // reported as such (the peer's code kept in the context) rather than passed on unknown.
      if (isErrorCode(code)) p.reject(new VisError(code, message, { op: p.op, ...rest }))
      else p.reject(new VisError('protocol.unknown-error', message, { op: p.op, ...rest, peerCode: code }))
    }
  }

  private onNotification(obj: Record<string, unknown>): void {
    const op = typeof obj.op === 'string' ? obj.op : ''
    const schemas = this.opts.notifications ?? {}
    const schema = Object.hasOwn(schemas, op) ? schemas[op] : undefined
    if (!schema) {
      this.stats.unknownOp++
      this.log(`dropped unknown notification ${JSON.stringify(op).slice(0, 80)}`)
      return
    }
    const parsed = schema.safeParse(obj)
    if (!parsed.success) {
      this.stats.invalid++
      this.log(`dropped invalid ${op} notification`)
      return
    }
    this.opts.onNotification?.(op, parsed.data as NotificationEnvelope)
  }
}

function isPlainOkReply(obj: Record<string, unknown>): obj is { id: number; ok: true; value: unknown } {
  if (obj.ok !== true || !('value' in obj)) return false
  const id = obj.id
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) return false
  let keys = 0
  for (const _ in obj) keys++
  return keys === 3
}

export function toWireError(err: unknown): WireError {
  if (err instanceof VisError) return { code: err.code, message: err.message }
  if (err instanceof Error) return { code: 'error', message: err.message }
  return { code: 'error', message: String(err) }
}
