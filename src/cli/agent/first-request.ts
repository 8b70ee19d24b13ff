import { existsSync } from 'node:fs'
import { resolveModel } from '../../agent/config.js'
import { EarlyRequest } from '../../agent/first-request.js'
import { projectInstructions } from '../../agent/instructions.js'
import { systemPrompt } from '../../agent/prompt.js'
import {
  type PromptCacheKey,
  type PromptParts,
  readPromptCache,
  writePromptCache,
} from '../../agent/prompt-cache.js'
import { loadProvider } from '../../agent/providers/load.js'
import { expandTemplate } from '../../agent/templates.js'
import { packageVersion } from '../../util/package-version.js'
import type { AgentCliOptions, PreparedAgentCli } from './options.js'

// vis run's first model request, sent before the engine is even loaded (issue 32 §2): the
// system prompt is built from the project's cached prompt parts (src/agent/prompt-cache.ts)
// and AGENTS.md read now; the session starts while the request is in flight, and its turn takes
// the reply only if the prompt the session builds is the same (src/agent/host.ts). Without a
// cache (a fresh home, a changed extension, skill or config) nothing is sent early; the turn
// writes the cache for the next run either way.

export type FirstRequest = {
  early: EarlyRequest | undefined
  // The session's parts, written to the cache once the session has started.
  onPromptParts: (parts: PromptParts) => void
}

export async function sendFirstRequest(
  v: AgentCliOptions,
  prepared: PreparedAgentCli,
  task: string,
): Promise<FirstRequest> {
  const { config, mode, root } = prepared
  const spec = resolveModel(v.model, config)
  const key: PromptCacheKey = {
    version: packageVersion(),
    roots: [root],
    mode,
    shell: v.shell === true,
    network: v.network === true,
    toolCalling: spec.toolCalling,
  }
  const onPromptParts = (parts: PromptParts) => writePromptCache(config.home, key, parts)
  // A continued session has a history the request would lack.
  if (v.session !== undefined) return { early: undefined, onPromptParts }
  const parts = readPromptCache(config.home, key)
  if (!parts) return { early: undefined, onPromptParts }
  let expanded: string
  try {
    expanded = (await expandTemplate(task, config.home, root)).prompt
  } catch {
    // The turn reports a bad template itself.
    return { early: undefined, onPromptParts }
  }
  const { files } = await projectInstructions(config.home, parts.policy.roots)
  const system = systemPrompt({ ...parts, instructions: files, toolCalling: spec.toolCalling })
  const provider = await loadProvider(spec)
  const early = new EarlyRequest(provider, system, expanded, spec.toolCalling, config.stallMs)
  return { early, onPromptParts }
}

// Test-only (test/cli/first-request.test.ts): with VIS_TEST_HOLD_SESSION_START set, vis run
// waits, after its first request is sent, until that path exists before starting the session,
// so a test can see the request arrive while no session exists. Unset in every real run.
export async function testHoldBeforeSession(): Promise<void> {
  const path = process.env.VIS_TEST_HOLD_SESSION_START
  if (!path) return
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 10))
}
