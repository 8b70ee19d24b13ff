import type { BlockView } from '../engine/schemas.js'
import type { Part } from './providers/types.js'

export const STDOUT_CLIP_CHARS = 65_536

const n = (x: number) => x.toLocaleString('en-US')

// The block's stdout as the model reads it: cut at the clip with a notice saying how much.
export function clipStdout(stdout: string, max = STDOUT_CLIP_CHARS): string {
  if (stdout.length <= max) return stdout
  const cut = stdout.length - max
  return (
    `${stdout.slice(0, max)}\n` +
    `[vis: stdout clipped: ${n(cut)} of ${n(stdout.length)} characters were cut. ` +
    'Narrow the next block: print less (a slice, a count, a summary, a grep) instead of everything.]'
  )
}

const json = (v: unknown): string => {
  try {
    return JSON.stringify(v)
  } catch {
    return String(v)
  }
}

type ErrorLike = { phase?: unknown; code?: unknown; message: string; excerpt?: unknown; hints?: unknown }

function errorText(e: ErrorLike): string {
  const phase =
    typeof e.phase === 'string'
      ? e.phase
      : typeof e.code === 'string'
        ? e.code.replace(/^block\./, '')
        : 'block'
  const lines = [`✗ ${phase} error: ${e.message}`]
  if (typeof e.excerpt === 'string' && e.excerpt !== '') lines.push(e.excerpt)
  // The guest already folds its hints into the message; others' hints are added here.
  if (Array.isArray(e.hints)) {
    for (const h of e.hints) if (typeof h === 'string' && !e.message.includes(h)) lines.push(`hint: ${h}`)
  }
  return lines.join('\n')
}

// The `survived` report (issue 13: what outlived an interrupt, a timeout or a worker
// replacement), wherever the outcome carries it; a shape this does not know is shown as JSON.
function survivedText(block: BlockView): string | undefined {
  const b = block as BlockView & { survived?: unknown }
  const s = b.survived ?? (b.error as { survived?: unknown } | null)?.survived
  if (s === undefined || s === null) return undefined
  if (typeof s === 'string') return `survived: ${s}`
  const r = s as {
    cause?: unknown
    worker_replaced?: unknown
    intact?: unknown
    restored?: unknown
    lost?: unknown
    cancelled?: unknown
  }
  const names = (x: unknown) => (Array.isArray(x) && x.length > 0 ? x.map(String).join(', ') : '-')
  if (typeof r.cause !== 'string' || !Array.isArray(r.intact)) return `survived: ${json(s)}`
  const calls = Array.isArray(r.cancelled)
    ? r.cancelled.map((c: { tool?: unknown; call_id?: unknown }) => `${String(c.tool)}#${String(c.call_id)}`)
    : []
  return (
    `survived (${r.cause}${r.worker_replaced === true ? ', the worker was replaced' : ''}): ` +
    `intact: ${names(r.intact)}; restored: ${names(r.restored)}; lost: ${names(r.lost)}; ` +
    `cancelled tool calls: ${names(calls)}`
  )
}

export type AttachmentBytes = (attachmentId: string) => { mediaType: string; data: Buffer } | undefined

// What the model reads after a block: stdout (clipped), the result, the error with its excerpt,
// the survived report, and images as image parts (other attachments are named).
export function renderBlock(block: BlockView, bytes: AttachmentBytes, images: boolean): Part[] {
  const text: string[] = []
  if (block.stdout !== '') text.push(clipStdout(block.stdout))
  if (block.result !== null && block.result !== undefined) text.push(`result: ${json(block.result)}`)
  if (block.error) text.push(errorText(block.error))
  const survived = survivedText(block)
  if (survived) text.push(survived)
  const parts: Part[] = []
  for (const a of block.attachments) {
    if (images && a.media_type.startsWith('image/')) {
      const got = bytes(a.id)
      if (got) {
        parts.push({ type: 'image', mediaType: got.mediaType, data: got.data.toString('base64') })
        text.push(`[attachment ${a.name ?? a.id}: ${a.media_type}, ${n(a.size)} bytes, shown below]`)
        continue
      }
    }
    text.push(`[attachment ${a.name ?? a.id}: ${a.media_type}, ${n(a.size)} bytes]`)
  }
  if (text.length === 0) text.push('(the block ran: no output, no result)')
  return [{ type: 'text', text: text.join('\n') }, ...parts]
}
