import { ownValue } from '../util/own-key.js'
import type { AgentConfig } from './config.js'
import type { ProviderFailure } from './providers/failure.js'
import type { Message, Provider } from './providers/types.js'
import { PYTHON_TOOL } from './providers/types.js'

// Context windows (input tokens) of common models, matched by the longest prefix of the model
// name (`gpt-4.1-mini-2025-04-14` finds `gpt-4.1`). Published figures; agent.json
// `contextWindows` overrides or adds (a local server's model is whatever it was started with).
export const KNOWN_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ['gpt-5', 400_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['codex-mini', 200_000],
  ['claude', 200_000],
  ['gemini', 1_048_576],
  ['qwen2.5-coder', 32_768],
  ['qwen3', 32_768],
  ['llama3', 8_192],
  ['llama3.1', 131_072],
  ['llama3.2', 131_072],
  ['llama3.3', 131_072],
  ['mistral', 32_768],
  ['deepseek', 128_000],
]
// A model nobody named: small enough that a local server's default (often 32k) is not
// overrun by much before its refusal, which compacts anyway.
export const DEFAULT_WINDOW = 32_768

// The share of the window a request may fill before the loop compacts: the reply needs room
// too, and the estimate is rough.
export const DEFAULT_COMPACT_AT = 0.75

export function contextWindow(
  config: Pick<AgentConfig, 'contextWindows'>,
  p: Pick<Provider, 'name' | 'model'>,
) {
  const own = config.contextWindows ?? {}
  // Own keys only: a model named "constructor" would otherwise read a function as its window.
  const set = ownValue(own, `${p.name}/${p.model}`) ?? ownValue(own, p.model)
  if (set !== undefined) return set
  // The model part may carry an organisation (`Qwen/Qwen2.5-7B`) or a tag (`qwen2.5-coder:7b`).
  const name = p.model.toLowerCase().split('/').pop() ?? ''
  let best: readonly [string, number] | undefined
  for (const k of KNOWN_WINDOWS) {
    if (name.startsWith(k[0]) && (!best || k[0].length > best[0].length)) best = k
  }
  return best?.[1] ?? DEFAULT_WINDOW
}

// An image part counts as what the APIs bill a mid-sized picture, not its base64 length.
const IMAGE_TOKENS = 1_600
// About four characters a token for English and code; JSON-heavy tool output packs fewer, so
// the estimate leans high (compacting a little early is cheap, a refusal costs a request).
const CHARS_PER_TOKEN = 3.5

// Each message's size, counted once: the loop estimates the whole request before every
// iteration, and a long session's history would otherwise be re-measured (its reasoning items
// re-serialised) each time. Messages in a history are never changed in place (a compaction
// replaces them), so the object is the key.
const sizes = new WeakMap<Message, { chars: number; images: number }>()
const TOOL_CHARS = JSON.stringify(PYTHON_TOOL).length

function messageChars(m: Message): { chars: number; images: number } {
  let size = sizes.get(m)
  if (!size) {
    size = measure(m)
    sizes.set(m, size)
  }
  return size
}

function measure(m: Message): { chars: number; images: number } {
  let chars = 16
  let images = 0
  if (m.role === 'assistant') {
    chars += m.text.length
    for (const c of m.toolCalls) chars += c.arguments.length + c.name.length + c.id.length + 24
    for (const r of m.reasoning ?? []) chars += JSON.stringify(r).length
  } else {
    for (const p of m.content) {
      if (p.type === 'text') chars += p.text.length
      else images++
    }
  }
  return { chars, images }
}

// The request's size in tokens, estimated before it is sent (no tokenizer ships for every
// provider; the loop checks against the window with a margin instead).
export function estimateTokens(system: string, messages: readonly Message[], tools: boolean): number {
  let chars = system.length + (tools ? TOOL_CHARS : 0)
  let images = 0
  for (const m of messages) {
    const c = messageChars(m)
    chars += c.chars
    images += c.images
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS
}

// The provider refused the request for its size. OpenAI (and vLLM, LM Studio, llama.cpp through
// their OpenAI-compatible errors) say `context_length_exceeded` or "maximum context length";
// Anthropic "prompt is too long"; Ollama and llama.cpp "exceeds the context size/window";
// some proxies answer 413.
const OVERFLOW = [
  /context_length_exceeded/i,
  /maximum context length/i,
  /prompt is too long/i,
  /exceeds? (?:the )?(?:available )?context (?:size|window|length)/i,
  /context window/i,
  /too many tokens/i,
  /input is too long/i,
  /reduce the length of the (?:messages|input|prompt)/i,
]
export function isContextOverflow(f: Pick<ProviderFailure, 'status' | 'message'>): boolean {
  if (f.status === 413) return true
  if (f.status !== undefined && f.status !== 400) return false
  return OVERFLOW.some((re) => re.test(f.message))
}
