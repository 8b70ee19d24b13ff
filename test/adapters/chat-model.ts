// An AI SDK language model (the v3 spec `generateText` drives) over OpenAI Chat Completions,
// sent by the `openai` SDK: how the AI SDK tests reach the provider double without
// @ai-sdk/openai, which is not installed. It translates the AI SDK's prompt (tool results as
// the adapter's toModelOutput made them) to Chat messages and the streamed reply back, so the
// double records exactly what a model would be sent.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Prompt,
} from '@ai-sdk/provider'
import OpenAI from 'openai'
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions'

type ToolOutput = Extract<LanguageModelV3Prompt[number], { role: 'tool' }>['content'][number]

function toolText(part: ToolOutput): { text: string; images: string[] } {
  if (part.type !== 'tool-result') return { text: '', images: [] }
  const o = part.output
  if (o.type === 'text' || o.type === 'error-text') return { text: o.value, images: [] }
  if (o.type === 'content') {
    const text: string[] = []
    const images: string[] = []
    for (const c of o.value) {
      if (c.type === 'text') text.push(c.text)
      else if (c.type === 'image-data') images.push(`data:${c.mediaType};base64,${c.data}`)
    }
    return { text: text.join('\n'), images }
  }
  if (o.type === 'execution-denied') return { text: o.reason ?? 'denied', images: [] }
  return { text: JSON.stringify(o.value), images: [] }
}

function chatMessages(prompt: LanguageModelV3Prompt): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = []
  for (const m of prompt) {
    if (m.role === 'system') out.push({ role: 'system', content: m.content })
    else if (m.role === 'user')
      out.push({
        role: 'user',
        content: m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
      })
    else if (m.role === 'assistant') {
      const text = m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
      const calls = m.content.flatMap((p) =>
        p.type === 'tool-call'
          ? [
              {
                id: p.toolCallId,
                type: 'function' as const,
                function: { name: p.toolName, arguments: JSON.stringify(p.input) },
              },
            ]
          : [],
      )
      out.push({ role: 'assistant', content: text, ...(calls.length ? { tool_calls: calls } : {}) })
    } else {
      // Chat's tool messages carry text; images follow as a user message, as the agent loop sends them.
      const images: string[] = []
      for (const p of m.content) {
        if (p.type !== 'tool-result') continue
        const r = toolText(p)
        out.push({ role: 'tool', tool_call_id: p.toolCallId, content: r.text })
        images.push(...r.images)
      }
      if (images.length > 0)
        out.push({ role: 'user', content: images.map((url) => ({ type: 'image_url', image_url: { url } })) })
    }
  }
  return out
}

export function chatModel(baseURL: string, modelId = 'double-model'): LanguageModelV3 {
  const client = new OpenAI({ baseURL, apiKey: 'sk-double', maxRetries: 0 })
  return {
    specificationVersion: 'v3',
    provider: 'double.chat',
    modelId,
    supportedUrls: {},
    async doGenerate(options: LanguageModelV3CallOptions) {
      const tools: ChatCompletionTool[] = (options.tools ?? []).flatMap((t) =>
        t.type === 'function'
          ? [
              {
                type: 'function' as const,
                function: {
                  name: t.name,
                  description: t.description ?? '',
                  parameters: t.inputSchema as Record<string, unknown>,
                },
              },
            ]
          : [],
      )
      const stream = await client.chat.completions.create(
        {
          model: modelId,
          messages: chatMessages(options.prompt),
          ...(tools.length ? { tools } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: options.abortSignal },
      )
      let text = ''
      let finish: string | null = null
      let input = 0
      let output = 0
      const calls: { id: string; name: string; args: string }[] = []
      for await (const chunk of stream) {
        if (chunk.usage) {
          input = chunk.usage.prompt_tokens
          output = chunk.usage.completion_tokens
        }
        const choice = chunk.choices[0]
        if (!choice) continue
        if (choice.finish_reason) finish = choice.finish_reason
        if (choice.delta.content) text += choice.delta.content
        for (const d of choice.delta.tool_calls ?? []) {
          calls[d.index] ??= { id: '', name: '', args: '' }
          const c = calls[d.index]!
          if (d.id) c.id = d.id
          if (d.function?.name) c.name = d.function.name
          if (d.function?.arguments) c.args += d.function.arguments
        }
      }
      const content: LanguageModelV3Content[] = []
      if (text) content.push({ type: 'text', text })
      for (const c of calls)
        content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.args })
      return {
        content,
        finishReason: {
          unified: finish === 'tool_calls' ? 'tool-calls' : finish === 'length' ? 'length' : 'stop',
          raw: finish ?? undefined,
        },
        usage: {
          inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: output, text: output, reasoning: 0 },
        },
        warnings: [],
      }
    },
    async doStream() {
      throw new Error('the double model answers generateText only')
    },
  }
}
