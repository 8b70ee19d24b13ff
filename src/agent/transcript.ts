import type { Engine } from '../engine/engine.js'
import { errorMessage } from '../util/errors.js'
import type { Message, Part, Provider, ToolCall } from './providers/types.js'
import { PYTHON_TOOL } from './providers/types.js'
import type { AttachmentBytes } from './render.js'

// The messages a turn appends to the session's conversation, each built in one place: the live
// loop (loop.ts) appends them as the turn runs, and replay.ts rebuilds the very same ones from the
// stored rows after a restart, so a later turn sends what an unbroken process would have sent.

export const userText = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

export const capNotice = (n: number) =>
  `You have used all ${n} iterations of this turn. Do not run any more code: answer now, in plain text, ` +
  'with your best answer from what you have found so far (say what is unfinished).'

export const NOT_RUN: Part[] = [{ type: 'text', text: '(not run: the turn was cancelled)' }]

const errorPart = (text: string): Part[] => [{ type: 'text', text }]

// The stop reasons that mean the reply ran into the output token limit, by dialect: Chat
// Completions `length`, Anthropic `max_tokens`, Responses `incomplete` for max_output_tokens.
const TOKEN_LIMIT_STOPS = new Set(['length', 'max_tokens', 'max_output_tokens'])
export const hitTokenLimit = (stop: string | null | undefined): boolean =>
  stop != null && TOKEN_LIMIT_STOPS.has(stop)

// The code a call asks to run, or what the model reads instead when the call is unusable (another
// tool's name, arguments that are not JSON or lack a string `code`). `stop` is the reply's stop
// reason: arguments cut by the token limit are unfinished code, not a JSON mistake, and the model
// is told so (else it resends the same long block and is cut again).
export function callCode(call: ToolCall, stop?: string | null): { code: string } | { refused: Part[] } {
  if (call.name !== PYTHON_TOOL.name) {
    return {
      refused: errorPart(
        `✗ tool error: there is no tool named ${JSON.stringify(call.name)}; the only tool is ${PYTHON_TOOL.name}(code).`,
      ),
    }
  }
  let code: unknown
  try {
    code = (JSON.parse(call.arguments) as { code?: unknown })?.code
  } catch (err) {
    if (hitTokenLimit(stop)) {
      return {
        refused: errorPart(
          `✗ tool-call error: your reply reached the output token limit (stop: ${stop}) before this call's ` +
            'arguments were complete; nothing ran. Send a shorter block: split the work over several calls, ' +
            'or write long content to a file in parts.',
        ),
      }
    }
    return {
      refused: errorPart(
        `✗ tool-call error: the arguments were not valid JSON (${errorMessage(err)}). ` +
          `Call ${PYTHON_TOOL.name} again with arguments {"code": "<python source>"}.`,
      ),
    }
  }
  if (typeof code !== 'string') {
    return {
      refused: errorPart(
        `✗ tool-call error: the arguments need a string "code"; got ${call.arguments.slice(0, 200)}`,
      ),
    }
  }
  return { code }
}

// What one call did, as the model reads it: a tool result, or (models without tool calling, whose
// code came from a fenced block) a user message.
export function resultMessage(toolCalling: boolean, call: ToolCall, content: Part[]): Message {
  if (toolCalling) return { role: 'tool', callId: call.id, content }
  const [first, ...rest] = content
  const text = first?.type === 'text' ? first.text : ''
  return { role: 'user', content: [{ type: 'text', text: `What your block did:\n${text}` }, ...rest] }
}

// A session's attachment bytes, for image parts; one that is gone is named only.
export const engineAttachments =
  (engine: Engine, sessionId: string): AttachmentBytes =>
  (id) => {
    try {
      const { attachment, data } = engine.attachment(sessionId, id)
      return { mediaType: attachment.media_type, data }
    } catch {
      return undefined
    }
  }

export const modelRef = (p: Pick<Provider, 'name' | 'model'>) => `${p.name}/${p.model}`

// The conversation as one model is sent it: reasoning goes back only to the model that wrote it.
// A signature or an encrypted chain is bound to its model (Anthropic refuses another model's
// thinking blocks), and both APIs allow earlier turns' reasoning to be left out; within a turn
// the model never changes, so the tool cycle always keeps its own.
export function ownReasoning(history: readonly Message[], model: string): readonly Message[] {
  const foreign = (m: Message) => m.role === 'assistant' && m.reasoning && m.reasoningModel !== model
  if (!history.some(foreign)) return history
  return history.map((m) =>
    m.role === 'assistant' && foreign(m) ? { role: m.role, text: m.text, toolCalls: m.toolCalls } : m,
  )
}
