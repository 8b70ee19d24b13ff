import type { AgentConfig } from './config.js'
import { priceFor } from './config.js'
import { type Usage, zeroUsage } from './providers/types.js'

export type CostedUsage = Usage & { cost_usd: number | null }

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cached: a.cached + b.cached,
  }
}

export const sumUsage = (list: readonly Usage[]): Usage => list.reduce(addUsage, zeroUsage())

// Cost from the configured price table; null for a model it does not list (tokens only).
// Reasoning tokens are already counted among output tokens by every provider, so they are not
// billed twice; cached input is billed at its own price.
export function costed(usage: Usage, config: AgentConfig, ref: { name: string; model: string }): CostedUsage {
  const price = priceFor(config, { provider: ref.name, model: ref.model })
  if (!price) return { ...usage, cost_usd: null }
  const fresh = Math.max(0, usage.input - usage.cached)
  const cost =
    (fresh * price.input + usage.cached * (price.cached ?? price.input) + usage.output * price.output) / 1e6
  return { ...usage, cost_usd: Math.round(cost * 1e8) / 1e8 }
}
