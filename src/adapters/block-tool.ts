// The one core of the framework adapters (vis-runtime/ai-sdk, /openai-agents, /langchain): run
// a model's code as a block in a session and hand back what the agent loop shows a model. Each
// adapter only wraps this in its framework's tool shape.

import type { Part } from '../agent/providers/types.js'
import { PYTHON_TOOL } from '../agent/providers/types.js'
import { type RenderableBlock, renderBlock } from '../agent/render.js'
import { engineAttachments } from '../agent/transcript.js'
import { finishFromFailure, finishFromOutcome } from '../engine/block-finish.js'
import type { Engine } from '../engine/engine.js'
import { DEFAULT_TIMEOUT_MS } from '../engine/schemas.js'
import { stopBlock } from '../engine/stop-block.js'
import type { Session } from '../sessions/session.js'

// Where the blocks run: a session from createRuntime, or an engine's session (with history:
// its blocks are stored and shown on the session page like any other).
export type BlockTarget = Session | { engine: Engine; sessionId: string }

export type PythonToolOptions = {
  // Interrupt a block after this long (default 60 s, as the engine's blocks).
  timeoutMs?: number
  // The most stdout characters the model reads of one block (default 65,536); the rest is cut
  // with a notice telling the model to print less.
  outputClip?: number
  // 'parts': images a block attaches come back as image parts the model sees (for a model that
  // reads images in tool results); 'notes' (the default): each attachment is named in the text.
  attachments?: 'notes' | 'parts'
  // Stops the running block when it aborts, beside the signal the framework hands each call
  // (the Agents SDK hands its tools none: pass the signal given to run()).
  signal?: AbortSignal
  // The tool's name (frameworks that name tools in their definition) and description.
  name?: string
  description?: string
}

export type ImagePart = { mediaType: string; data: string }
// What a block returns to a framework: the text the model reads, and images when asked for.
export type BlockToolOutput = { text: string; images: ImagePart[] }

export const TOOL_NAME = PYTHON_TOOL.name
export const TOOL_DESCRIPTION = PYTHON_TOOL.description
export const CODE_DESCRIPTION = PYTHON_TOOL.parameters.properties.code.description

// Runs the code and renders the outcome for the model. A signal that aborts before the block
// starts throws its reason (the framework's own abort); once the block runs, the abort
// interrupts it and the model's view of the interrupted block comes back.
export async function runBlockForModel(
  target: BlockTarget,
  code: string,
  opts: PythonToolOptions,
  callSignal?: AbortSignal,
): Promise<BlockToolOutput> {
  const signals = [opts.signal, callSignal].filter((s): s is AbortSignal => s !== undefined)
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
  signal?.throwIfAborted()
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const images = opts.attachments === 'parts'
  const parts =
    'engine' in target
      ? await onEngine(target, code, timeoutMs, images, opts.outputClip, signal)
      : await onSession(target, code, timeoutMs, images, opts.outputClip, signal)
  return toOutput(parts)
}

async function onEngine(
  t: { engine: Engine; sessionId: string },
  code: string,
  timeoutMs: number,
  images: boolean,
  clip: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Part[]> {
  const submitted = await t.engine.submitBlock(t.sessionId, { code, timeout_ms: timeoutMs })
  // Queued: cancelled; running: interrupted (the agent loop stops its blocks the same way).
  let ended = false
  const onAbort = () => void stopBlock(t.engine, t.sessionId, submitted.id, () => ended)
  signal?.addEventListener('abort', onAbort, { once: true })
  if (signal?.aborted) onAbort()
  try {
    const block = await submitted.done
    return renderBlock(block, engineAttachments(t.engine, t.sessionId), images, clip)
  } finally {
    ended = true
    signal?.removeEventListener('abort', onAbort)
  }
}

// A runtime session runs its blocks in call order, and its interrupt stops whichever block is
// running: the adapter's calls on one session go one at a time, so an abort interrupts only
// its own block (a call still waiting for its turn never starts).
const turns = new WeakMap<Session, Promise<unknown>>()

async function onSession(
  session: Session,
  code: string,
  timeoutMs: number,
  images: boolean,
  clip: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Part[]> {
  const before = turns.get(session) ?? Promise.resolve()
  const mine = before.then(() => runOnSession(session, code, timeoutMs, images, clip, signal))
  turns.set(
    session,
    mine.catch(() => undefined),
  )
  return mine
}

async function runOnSession(
  session: Session,
  code: string,
  timeoutMs: number,
  images: boolean,
  clip: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Part[]> {
  signal?.throwIfAborted()
  let ended = false
  const onAbort = () => void interruptUntilLanded(session, () => ended)
  signal?.addEventListener('abort', onAbort, { once: true })
  const t0 = performance.now()
  try {
    const result = await session.runBlock(code, { timeoutMs })
    const finish = finishFromOutcome(result, performance.now() - t0, { maxOutputChars: Infinity })
    const bytes = finish.attachments ?? []
    const block: RenderableBlock = {
      stdout: finish.stdout ?? '',
      result: finish.result ?? null,
      value: finish.value ?? null,
      error: (finish.error ?? null) as RenderableBlock['error'],
      survived: (finish.survived ?? null) as RenderableBlock['survived'],
      attachments: bytes.map((a, i) => ({
        id: String(i),
        name: a.name ?? null,
        media_type: a.mediaType,
        size: a.data.length,
      })),
    }
    const bytesOf = (id: string) => {
      const a = bytes[Number(id)]
      return a && { mediaType: a.mediaType, data: Buffer.from(a.data) }
    }
    return renderBlock(block, bytesOf, images, clip)
  } catch (err) {
    // The worker failed under the block, or the session closed: the model reads why, as the
    // engine stores such a block.
    const finish = finishFromFailure(err, session.takePartialStdout(), performance.now() - t0, {
      maxOutputChars: Infinity,
    })
    const block: RenderableBlock = {
      stdout: finish.stdout ?? '',
      result: null,
      value: null,
      error: finish.error as RenderableBlock['error'],
      survived: null,
      attachments: [],
    }
    return renderBlock(block, () => undefined, false, clip)
  } finally {
    ended = true
    signal?.removeEventListener('abort', onAbort)
  }
}

// An interrupt sent before the block's Python has started does not land: sent again until one
// lands, the worker is retired, or the block has ended.
async function interruptUntilLanded(session: Session, ended: () => boolean): Promise<void> {
  while (!ended()) {
    const r = await session.interrupt().catch(() => undefined)
    if (r?.landed || r?.retired) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function toOutput(parts: Part[]): BlockToolOutput {
  const text: string[] = []
  const images: ImagePart[] = []
  for (const p of parts) {
    if (p.type === 'text') text.push(p.text)
    else if (p.type === 'image') images.push({ mediaType: p.mediaType, data: p.data })
  }
  return { text: text.join('\n'), images }
}
