import { join } from 'node:path'
import { z } from 'zod'
import { SessionModeSchema } from '../confinement/modes.js'
import { VisError } from '../util/errors.js'
import { readHomeFile } from '../util/home-files.js'
import { openHome } from '../util/home-guard.js'
import { ownValue } from '../util/own-key.js'
import { issuesText } from '../util/zod-issues.js'
import { BudgetSchema } from './budget.js'
import { ANTHROPIC_MAX_TOKENS } from './providers/types.js'
import { SubLoopConfigSchema } from './sub-loop-config.js'

export const PROVIDERS = [
  'openai',
  'openai-responses',
  'anthropic',
  'ollama',
  'lmstudio',
  'vllm',
  'llamacpp',
] as const
export type ProviderName = (typeof PROVIDERS)[number]

// Local OpenAI-compatible servers: Chat Completions at their usual loopback address.
export const PRESETS: Record<string, { baseURL: string; toolCalling: boolean }> = {
  ollama: { baseURL: 'http://127.0.0.1:11434/v1', toolCalling: true },
  lmstudio: { baseURL: 'http://127.0.0.1:1234/v1', toolCalling: true },
  vllm: { baseURL: 'http://127.0.0.1:8000/v1', toolCalling: true },
  llamacpp: { baseURL: 'http://127.0.0.1:8080/v1', toolCalling: true },
}

// Dollars per million tokens.
const PriceSchema = z
  .object({
    input: z.number().min(0),
    output: z.number().min(0),
    cached: z.number().min(0).optional().describe('Cached input tokens; the input price when unset.'),
  })
  .strict()
export type Price = z.infer<typeof PriceSchema>

// Anthropic's own keys: extended thinking needs 1024 ≤ budget_tokens < max_tokens.
const ANTHROPIC_ONLY = ['thinking', 'maxTokens'] as const
export const ThinkingSchema = z
  .object({
    type: z.enum(['enabled', 'adaptive']).default('enabled'),
    budget_tokens: z.number().int().min(1024).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.type === 'enabled' && t.budget_tokens === undefined)
      ctx.addIssue({ code: 'custom', path: ['budget_tokens'], message: 'required when thinking is enabled' })
    if (t.type === 'adaptive' && t.budget_tokens !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['budget_tokens'],
        message: 'adaptive thinking takes no budget (the model chooses it)',
      })
  })
export type ThinkingConfig = z.infer<typeof ThinkingSchema>
const EndpointSchema = z
  .object({
    baseURL: z.string().url().optional(),
    apiKey: z.string().optional(),
    maxTokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Anthropic: max_tokens (default ${ANTHROPIC_MAX_TOKENS}).`),
    thinking: ThinkingSchema.optional().describe(
      'Anthropic: extended thinking on: {"budget_tokens": N} (N ≥ 1024, below maxTokens), or {"type": "adaptive"} for models that choose their own budget.',
    ),
  })
  .strict()
  .superRefine((e, ctx) => {
    const max = e.maxTokens ?? ANTHROPIC_MAX_TOKENS
    if (e.thinking?.budget_tokens !== undefined && e.thinking.budget_tokens >= max) {
      ctx.addIssue({
        code: 'custom',
        path: ['thinking', 'budget_tokens'],
        message: `must be below maxTokens (${max}): the answer needs room after the thinking`,
      })
    }
  })

export const ApprovalRuleSchema = z
  .object({
    tool: z.string().min(1),
    // A regular expression over the call's JSON arguments; absent: every call of the tool.
    match: z.string().optional(),
  })
  .strict()

// <vis home>/agent.json; every key optional, the environment fills the rest.
export const AgentConfigFileSchema = z
  .object({
    model: z.string().optional().describe('<provider>/<model>, as VIS_MODEL'),
    providers: z
      .record(EndpointSchema)
      .default({})
      .superRefine((all, ctx) => {
        for (const [name, e] of Object.entries(all)) {
          if (name === 'anthropic') continue
          for (const key of ANTHROPIC_ONLY) {
            if (e[key] !== undefined)
              ctx.addIssue({
                code: 'custom',
                path: [name, key],
                message: 'only the anthropic provider takes it',
              })
          }
        }
      }),
    prices: z.record(PriceSchema).default({}).describe('Keyed by <provider>/<model> or by <model>.'),
    aliases: z
      .record(z.string().regex(/^[^/]+\/.+$/, 'must be <provider>/<model>'))
      .default({})
      .describe('Models agent definitions name by alias (sonnet, opus, haiku...) as <provider>/<model>.'),
    maxIterations: z.number().int().min(1).max(1000).optional(),
    stallMs: z.number().int().min(10).optional(),
    blockTimeoutMs: z.number().int().min(1).optional(),
    contextWindows: z
      .record(z.number().int().min(1024))
      .default({})
      .describe(
        'Input tokens a model takes, keyed by <provider>/<model> or by <model>; overrides the table of known windows (src/agent/context-window.ts).',
      ),
    compaction: z
      .object({
        at: z
          .number()
          .min(0.1)
          .max(0.95)
          .optional()
          .describe('Share of the window a request may fill before older iterations are summarised.'),
        keep: z
          .number()
          .int()
          .min(0)
          .max(20)
          .optional()
          .describe('Iterations kept verbatim after the task (fewer when they alone overfill the window).'),
      })
      .strict()
      .default({}),
    toolCalling: z
      .boolean()
      .optional()
      .describe('false: the fenced-block fallback for models without tools.'),
    images: z
      .boolean()
      .optional()
      .describe(
        'Whether the model takes images (attachments as image parts); default: not for local presets.',
      ),
    budget: BudgetSchema.optional().describe(
      'Each turn\'s default budget: {"tokens": N, "cost_usd": X}; its sub_loop children share it.',
    ),
    subLoops: SubLoopConfigSchema.optional().describe(
      'sub_loop() children: concurrency per parent turn (4), timeoutMs each (600000), maxDepth (2).',
    ),
    mode: SessionModeSchema.optional().describe(
      'The mode of the sessions vis run and vis chat create: workspace (the default), read-only or review; --read-only, --review and --mode override it.',
    ),
    approvals: z
      .object({
        auto: z.enum(['ask', 'approve', 'deny']).default('ask'),
        timeoutMs: z
          .number()
          .int()
          .min(1)
          .default(10 * 60_000),
        rules: z.array(ApprovalRuleSchema).default([]),
      })
      .strict()
      .default({}),
  })
  .strict()
export type AgentConfigFile = z.infer<typeof AgentConfigFileSchema>

export type ModelSpec = {
  provider: ProviderName
  model: string
  baseURL?: string
  apiKey?: string
  toolCalling: boolean
  images: boolean
  // Anthropic only (the schema refuses them elsewhere).
  maxTokens?: number
  thinking?: ThinkingConfig
}

export type AgentConfig = AgentConfigFile & {
  maxIterations: number
  stallMs: number
  blockTimeoutMs: number
  // Waits before retrying a retryable failure; the loop uses retry-after when the server sends it.
  backoffMs: number[]
  home: string
  // Whether a person can answer an approval here (false: vis run without a terminal). What only a
  // person may approve is then refused, whatever approvals.auto says. Default: yes (HTTP, vis
  // chat and the library decide through agent.decide).
  personAnswers?: boolean
}

export const DEFAULTS = {
  maxIterations: 30,
  stallMs: 60_000,
  blockTimeoutMs: 120_000,
  backoffMs: [1000, 4000],
}

export function loadAgentConfig(
  opts: { home?: string; overrides?: Partial<AgentConfigFile> & { backoffMs?: number[] } } = {},
): AgentConfig {
  // Its approvals and providers steer the host: never from a home a running sandbox can write.
  const home = openHome(opts.home, 'agent.config')
  const path = join(home, 'agent.json')
  let file: AgentConfigFile = AgentConfigFileSchema.parse({})
  // Nor from a file the home links to where a sandbox writes (home-files.ts).
  const text = readHomeFile(home, path, 'home.file-writable', 'agent.config')
  if (text !== undefined) {
    let raw: unknown
    try {
      raw = JSON.parse(text)
    } catch (err) {
      throw new VisError('agent.config-invalid', `${path} is not JSON: ${(err as Error).message}`, { path })
    }
    const parsed = AgentConfigFileSchema.safeParse(raw)
    if (!parsed.success) {
      const why = issuesText(parsed.error, '(root)')
      throw new VisError('agent.config-invalid', `${path}: ${why}`, { path })
    }
    file = parsed.data
  }
  const o = opts.overrides ?? {}
  const merged = { ...file, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) }
  return {
    ...merged,
    providers: { ...file.providers, ...(o.providers ?? {}) },
    prices: { ...file.prices, ...(o.prices ?? {}) },
    contextWindows: { ...file.contextWindows, ...(o.contextWindows ?? {}) },
    approvals: AgentConfigFileSchema.shape.approvals.parse(o.approvals ?? file.approvals),
    maxIterations: merged.maxIterations ?? DEFAULTS.maxIterations,
    stallMs: merged.stallMs ?? DEFAULTS.stallMs,
    blockTimeoutMs: merged.blockTimeoutMs ?? DEFAULTS.blockTimeoutMs,
    backoffMs: o.backoffMs ?? DEFAULTS.backoffMs,
    home,
  }
}

// `<provider>/<model>`: the model part may hold more slashes (`vllm/Qwen/Qwen2.5-7B`).
export function resolveModel(
  ref: string | undefined,
  config: AgentConfig,
  env: NodeJS.ProcessEnv = process.env,
): ModelSpec {
  const spec = ref ?? env.VIS_MODEL ?? config.model
  if (!spec) {
    throw new VisError(
      'agent.no-model',
      'No model configured: set VIS_MODEL=<provider>/<model> (e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder) or "model" in agent.json under the vis home.',
    )
  }
  const slash = spec.indexOf('/')
  const provider = spec.slice(0, slash) as ProviderName
  const model = spec.slice(slash + 1)
  if (slash <= 0 || model === '' || !PROVIDERS.includes(provider)) {
    throw new VisError(
      'agent.bad-model',
      `${JSON.stringify(spec)} is not <provider>/<model> with a provider among ${PROVIDERS.join(', ')}.`,
      { model: spec },
    )
  }
  const file = config.providers[provider] ?? {}
  const preset = PRESETS[provider]
  const anthropic = provider === 'anthropic'
  const baseURL =
    file.baseURL ??
    (anthropic ? env.ANTHROPIC_BASE_URL : preset ? undefined : env.OPENAI_BASE_URL) ??
    preset?.baseURL
  const apiKey = file.apiKey ?? (anthropic ? env.ANTHROPIC_API_KEY : preset ? 'local' : env.OPENAI_API_KEY)
  if (!apiKey && !baseURL) {
    const v = anthropic ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY'
    throw new VisError(
      'agent.no-api-key',
      `${provider} needs ${v} (or providers.${provider}.apiKey in agent.json).`,
      {
        provider,
      },
    )
  }
  return {
    provider,
    model,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    toolCalling: config.toolCalling ?? preset?.toolCalling ?? true,
    // Most local models read text only: an image part would make the server refuse the request.
    images: config.images ?? preset === undefined,
    ...(file.maxTokens !== undefined ? { maxTokens: file.maxTokens } : {}),
    ...(file.thinking ? { thinking: file.thinking } : {}),
  }
}

export function priceFor(config: AgentConfig, spec: { provider: string; model: string }): Price | undefined {
  // Own keys only: a model named "toString" has no price, not Object.prototype's function.
  return ownValue(config.prices, `${spec.provider}/${spec.model}`) ?? ownValue(config.prices, spec.model)
}
