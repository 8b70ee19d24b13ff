import type { Engine } from '../engine/engine.js'
import type { BlockView } from '../engine/schemas.js'
import { stopBlock } from '../engine/stop-block.js'
import { newId } from '../persistence/ids.js'
import { type ErrorCode, errorMessage, isVisError, VisError } from '../util/errors.js'
import { budgetExceeded, type TurnBudget } from './budget.js'
import { shouldCompact } from './compaction.js'
import type { AgentConfig } from './config.js'
import { isContextOverflow } from './context-window.js'
import type { EarlyRequest } from './first-request.js'
import type { CallScope } from './journal.js'
import type { LiveState } from './live-state.js'
import { classify, ProviderFailure, StallWatch } from './providers/failure.js'
import type { Message, ModelReply, Part, Provider, ToolCall, Usage } from './providers/types.js'
import { PYTHON_TOOL, zeroUsage } from './providers/types.js'
import type { AgentRecords } from './records.js'
import { renderBlock } from './render.js'
import { RepeatedFailures, WARN_AT_REPEATS } from './repeats.js'
import {
  callCode,
  capNotice,
  engineAttachments,
  hitTokenLimit,
  modelRef,
  NOT_RUN,
  ownReasoning,
  resultMessage,
  userText,
} from './transcript.js'
import { compactTurn, type TurnState, turnEstimate, windowOf } from './turn-compaction.js'
import { addUsage, costed } from './usage.js'

export const MAX_FAILURES = 3
export const MAX_EMPTY_REPLIES = 3
export const MAX_OVERFLOW_COMPACTIONS = 2
// A retry-after longer than this ends the turn instead of holding it.
const MAX_RETRY_WAIT_MS = 120_000

export type TurnEmit = (type: string, data: Record<string, unknown>) => void

export type TurnRun = {
  engine: Engine
  records: AgentRecords
  config: AgentConfig
  provider: Provider
  toolCalling: boolean
  sessionId: string
  turnId: string
  system: string
  // The session's conversation so far; the turn appends to it (history only grows).
  history: Message[]
  prompt: string
  maxIterations: number
  signal: AbortSignal
  // The turn's token/cost budget (a child's draws on its parent's): checked before each request.
  budget?: TurnBudget
  scope: CallScope
  emit: TurnEmit
  // Identical failures in a row across the turn's blocks (src/agent/repeats.ts).
  repeats?: RepeatedFailures
  // The session's live state for a compaction's note (host.ts asks the guest).
  liveState?: () => Promise<LiveState | undefined>
  // The note of a fold_session() call made by the block that just ran, taken once.
  takeFold?: () => string | undefined
  // The first request, already sent with this turn's system prompt and task (first-request.ts):
  // the first iteration takes its reply instead of asking again.
  early?: EarlyRequest
}

export type TurnEnd = {
  status: 'done' | 'failed' | 'cancelled'
  answer: string | null
  error: { code: string; message: string } | null
  usage: Usage
}

export class TurnCancelled extends VisError {
  constructor(sessionId: string, turnId: string) {
    super('turn.cancelled', 'The turn was cancelled.', { sessionId, turnId })
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })

// Models without tool calling: the first fenced python block of a reply is the code to run. The
// info string's first word names the language (any case: models write ```Python too); ```pycon
// (a transcript with >>> prompts) or ```pyproject.toml are not Python to run.
// Scanned in one pass: the reply is the model's, as hostile as its code, and a regex that looked
// for each opener's line end was quadratic (```py repeated on one line stalled the host for
// seconds: thirteenth outsider pass). Openers on one line share its end, found once.
const OPENER = /```(?:python3?|py)/gi

export function fencedBlock(text: string): string | undefined {
  let lineEnd = -1
  for (const m of text.matchAll(OPENER)) {
    let body = m.index + m[0].length
    const c = text[body]
    if (c === ' ' || c === '\t') {
      if (lineEnd < body) lineEnd = text.indexOf('\n', body)
      if (lineEnd < 0) return undefined
      body = lineEnd + 1
    } else if (c === '\n') body += 1
    else if (c === '\r' && text[body + 1] === '\n') body += 2
    else continue
    // The first opener with a line of its own decides: a later one's closing fence could only
    // come later still.
    const close = text.indexOf('```', body)
    return close < 0 ? undefined : text.slice(body, close)
  }
  return undefined
}

// One turn: ask the model, run the block it wrote, append what the block did, until the model
// answers in text (or the cap, three failures, three empty replies, or a cancel ends it).
export async function runTurn(t: TurnRun): Promise<TurnEnd> {
  t.repeats ??= new RepeatedFailures()
  const st: TurnState = { taskIndex: t.history.length, usage: zeroUsage() }
  const cancelled = () => t.signal.aborted
  t.history.push(userText(t.prompt))
  let asked = 0
  let empties = 0
  try {
    for (;;) {
      if (cancelled()) throw new TurnCancelled(t.sessionId, t.turnId)
      const spent = t.budget?.spent()
      if (spent !== undefined) throw budgetExceeded(spent, { sessionId: t.sessionId, turnId: t.turnId })
      const final = asked >= t.maxIterations
      if (final) t.history.push(userText(capNotice(t.maxIterations)))
      // The row is written once the reply is in (one commit per iteration); its id is known now so
      // streamed text can name it.
      const iter = { id: newId('iter'), position: asked + 1 }
      t.emit('iteration.started', { iteration_id: iter.id, position: iter.position, final })
      if (shouldCompact(turnEstimate(t), windowOf(t, st), t.config.compaction?.at))
        await compactTurn(t, st, 'threshold', iter.id)
      const reply = await callModel(t, st, final, iter.id)
      asked++
      const cost = costed(reply.usage, t.config, t.provider)
      t.budget?.charge(cost)
      st.usage = addUsage(st.usage, reply.usage)
      const calls = final ? [] : callsOf(reply, t.toolCalling, iter.position)
      t.records.addIteration(t.turnId, iter.id, {
        model: modelRef(t.provider),
        requestId: reply.requestId,
        text: reply.text,
        toolCalls: calls,
        usage: cost,
        stop: reply.stop,
        reasoning: reply.reasoning ?? null,
      })
      t.emit('model.reply', {
        iteration_id: iter.id,
        request_id: reply.requestId,
        usage: cost,
        tool_calls: calls.length,
        stop: reply.stop,
      })
      if (calls.length === 0) {
        if (reply.text.trim() === '') {
          if (final) {
            return fail(
              st.usage,
              'agent.iteration-cap',
              `The turn reached its cap of ${t.maxIterations} iterations and the model gave no final answer.`,
            )
          }
          empties++
          if (empties >= MAX_EMPTY_REPLIES) {
            return fail(
              st.usage,
              'agent.empty-replies',
              `The model sent ${MAX_EMPTY_REPLIES} empty replies in a row (no text, no code); the turn ends without an answer.` +
                // A reasoning model can spend its whole output limit thinking: say so, it is the fix.
                (hitTokenLimit(reply.stop)
                  ? ` The last one reached the output token limit (stop: ${reply.stop}) before writing anything: raise the model's output limit.`
                  : ''),
            )
          }
          continue
        }
        t.history.push({
          role: 'assistant',
          text: reply.text,
          toolCalls: [],
          ...reasoningOf(reply, t.provider),
        })
        return { status: 'done', answer: reply.text, error: null, usage: st.usage }
      }
      empties = 0
      t.history.push({
        role: 'assistant',
        text: reply.text,
        toolCalls: t.toolCalling ? calls : [],
        ...reasoningOf(reply, t.provider),
      })
      await runCalls(t, calls, iter.id, reply.stop)
      // fold_session(note) from the block: compact now, the note kept in what replaces the rest.
      const note = t.takeFold?.()
      if (note !== undefined) await compactTurn(t, st, 'fold', iter.id, note)
      if (t.repeats?.exhausted) {
        return fail(
          st.usage,
          'agent.repeated-failure',
          `The same failure happened ${t.repeats.count} times in a row (${t.repeats.last}); the model was warned at the ${WARN_AT_REPEATS}rd and kept repeating it, so the turn ends without an answer. Rephrase the task or fix what the error names.`,
        )
      }
    }
  } catch (err) {
    if (cancelled() || err instanceof TurnCancelled) {
      // Why, when whoever cancelled said (a client that hung up on a synchronous turn).
      const why = t.signal.reason
      const message = isVisError(why, 'turn.cancelled') ? why.message : 'The turn was cancelled.'
      return {
        status: 'cancelled',
        answer: null,
        error: { code: 'turn.cancelled', message },
        usage: st.usage,
      }
    }
    if (err instanceof ProviderFailure || isVisError(err)) return fail(st.usage, err.code, err.message)
    return fail(st.usage, 'agent.failed', errorMessage(err))
  }
}

const fail = (usage: Usage, code: ErrorCode, message: string): TurnEnd => ({
  status: 'failed',
  answer: null,
  error: { code, message },
  usage,
})

// The reply's reasoning rides with it in the history, so the next request sends it back.
const reasoningOf = (reply: ModelReply, p: Provider) =>
  reply.reasoning?.length ? { reasoning: reply.reasoning, reasoningModel: modelRef(p) } : {}

function callsOf(reply: ModelReply, toolCalling: boolean, position: number): ToolCall[] {
  if (toolCalling) return reply.toolCalls
  const code = fencedBlock(reply.text)
  return code === undefined
    ? []
    : [{ id: `block_${position}`, name: PYTHON_TOOL.name, arguments: JSON.stringify({ code }) }]
}

// Each call's result is appended even when the turn stops half-way: a conversation whose tool
// call has no result is refused by every provider on the next turn.
async function runCalls(
  t: TurnRun,
  calls: ToolCall[],
  iterationId: string,
  stop: string | null,
): Promise<void> {
  let i = 0
  try {
    for (; i < calls.length; i++) {
      if (t.signal.aborted) throw new TurnCancelled(t.sessionId, t.turnId)
      const content = await runCall(t, calls[i]!, iterationId, stop)
      t.history.push(resultMessage(t.toolCalling, calls[i]!, content))
    }
  } finally {
    for (; i < calls.length; i++) t.history.push(resultMessage(t.toolCalling, calls[i]!, NOT_RUN))
  }
}

async function runCall(
  t: TurnRun,
  call: ToolCall,
  iterationId: string,
  stop: string | null,
): Promise<Part[]> {
  const usable = callCode(call, stop)
  if ('refused' in usable) return usable.refused
  const block = await runBlock(t, usable.code, iterationId)
  t.repeats?.note(block.error as Parameters<RepeatedFailures['note']>[0])
  return renderBlock(block, engineAttachments(t.engine, t.sessionId), t.provider.images)
}

async function runBlock(t: TurnRun, code: string, iterationId: string): Promise<BlockView> {
  const submitted = await t.engine.submitBlock(
    t.sessionId,
    { code, turn_id: t.turnId, timeout_ms: t.config.blockTimeoutMs },
    { iterationId },
  )
  const blockId = submitted.id
  t.scope.blockId = blockId
  t.emit('block.started', { block_id: blockId, iteration_id: iterationId, code })
  // A cancel stops the block (queued: cancelled, running: interrupted); its pending tool calls
  // and approvals are cancelled with it.
  let ended = false
  const onAbort = () => void stopBlock(t.engine, t.sessionId, blockId, () => ended)
  t.signal.addEventListener('abort', onAbort, { once: true })
  if (t.signal.aborted) onAbort()
  try {
    const block = await submitted.done
    t.emit('block.ended', {
      block_id: blockId,
      iteration_id: iterationId,
      duration_ms: block.duration_ms,
      result: block.result,
      value: block.value,
      error: block.error,
      timed_out: block.timed_out,
    })
    return block
  } finally {
    ended = true
    t.signal.removeEventListener('abort', onAbort)
    t.scope.blockId = null
  }
}

// One model request with its retries: 429/5xx/connection failures wait (retry-after when sent,
// else the backoff) and try again, a stall is retried once; three failures in a row end the turn.
async function callModel(
  t: TurnRun,
  st: TurnState,
  final: boolean,
  iterationId: string,
): Promise<ModelReply> {
  let failures = 0
  let stalls = 0
  let refusals = 0
  for (;;) {
    const early = takeEarly(t, final)
    const watch = early?.watch ?? new StallWatch(t.config.stallMs, t.signal)
    const onCancel = () => early?.abort(t.signal.reason)
    if (early) t.signal.addEventListener('abort', onCancel, { once: true })
    try {
      const onDelta = (text: string) => {
        watch.kick()
        if (text !== '') t.emit('model.delta', { iteration_id: iterationId, text })
      }
      const reply = early
        ? await early.take(onDelta)
        : await t.provider.complete({
            system: t.system,
            messages: ownReasoning(t.history, modelRef(t.provider)),
            tools: t.toolCalling,
            toolChoice: final ? 'none' : 'auto',
            signal: watch.signal,
            onDelta,
          })
      // Both SDKs end a stream quietly when its signal aborts mid-way (a stall, a cancel): what
      // came back is the part before it, never a whole reply. Failed here like a thrown abort.
      if (watch.signal.aborted) throw watch.signal.reason ?? new Error('the request was aborted')
      return reply
    } catch (err) {
      if (t.signal.aborted) throw new TurnCancelled(t.sessionId, t.turnId)
      const f = classify(err, t.provider.name, watch.stalled, t.config.stallMs)
      // Refused for its size: compact and send the smaller request (twice at most: a refusal
      // after two compactions means even the task and the last iteration are too big).
      if (isContextOverflow(f) && refusals < MAX_OVERFLOW_COMPACTIONS) {
        refusals++
        // What was refused is over the window: the estimate of it bounds the real one.
        st.refusedAt = Math.min(st.refusedAt ?? Number.POSITIVE_INFINITY, turnEstimate(t))
        t.emit('model.retry', {
          iteration_id: iterationId,
          code: f.code,
          message: f.message,
          attempt: refusals,
          retrying: true,
          wait_ms: 0,
          compacting: true,
        })
        if (await compactTurn(t, st, 'refused', iterationId)) continue
      }
      failures++
      if (watch.stalled) stalls++
      const wait =
        f.retryAfterMs ?? t.config.backoffMs[Math.min(failures - 1, t.config.backoffMs.length - 1)] ?? 1000
      const last = !f.retryable || failures >= MAX_FAILURES || stalls > 1 || wait > MAX_RETRY_WAIT_MS
      t.emit('model.retry', {
        iteration_id: iterationId,
        code: f.code,
        message: f.message,
        attempt: failures,
        retrying: !last,
        wait_ms: last ? null : wait,
      })
      if (last) {
        const why = !f.retryable
          ? f.message
          : stalls > 1
            ? `the stream stalled twice (${t.config.stallMs} ms without data): ${f.message}`
            : wait > MAX_RETRY_WAIT_MS
              ? `the provider asked to wait ${Math.round(wait / 1000)} s before retrying: ${f.message}`
              : `${failures} failures in a row; the last: ${f.message}`
        throw new ProviderFailure(f.code, `The model request failed: ${why}`, false, f.status, undefined)
      }
      await sleep(wait, t.signal).catch(() => {
        throw new TurnCancelled(t.sessionId, t.turnId)
      })
    } finally {
      watch.dispose()
      t.signal.removeEventListener('abort', onCancel)
    }
  }
}

// The early request, once, and only for what it asked: the task alone, not the cap's question.
function takeEarly(t: TurnRun, final: boolean): EarlyRequest | undefined {
  const early = t.early
  t.early = undefined
  if (!early) return undefined
  if (final || t.history.length !== 1 || t.signal.aborted) {
    early.abort()
    return undefined
  }
  return early
}
