import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { z } from 'zod'
import { type AgentConfigFile, loadAgentConfig, ThinkingSchema } from '../../src/agent/config.js'
import type { Agent, AgentEvent } from '../../src/agent/host.js'
import { agentFor } from '../../src/agent/index.js'
import { createEngine, type Engine } from '../../src/engine/index.js'
import { ProviderDouble } from './double.js'

export const python = process.env.VIS_PYTHON_VERSION

export type Harness = {
  home: string
  root: string
  engine: Engine
  agent: Agent
  double: ProviderDouble
  sessionId: string
  events: AgentEvent[]
  // Closes the engine and opens a new one (and its agent) on the same home: a host restart.
  // `engine` and `agent` then name the new ones; the double keeps running.
  restart(): Promise<void>
  close(): Promise<void>
}

// A real engine (workers, SQLite) in a fresh vis home, its agent pointed at the provider double.
export async function harness(
  opts: {
    config?: Partial<AgentConfigFile> & { backoffMs?: number[] }
    shell?: boolean
    root?: string
    // Anthropic's own endpoint keys (thinking, maxTokens), beside the double's address.
    anthropic?: { thinking?: z.input<typeof ThinkingSchema>; maxTokens?: number }
  } = {},
): Promise<Harness> {
  const home = mkdtempSync(join(tmpdir(), 'vis-agent-home-'))
  const root = opts.root ?? mkdtempSync(join(tmpdir(), 'vis-agent-root-'))
  process.env.VIS_HOME = home
  const double = await new ProviderDouble().start()
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  const config = loadAgentConfig({
    home,
    overrides: {
      providers: {
        openai: { baseURL: double.openaiURL, apiKey: 'sk-double' },
        'openai-responses': { baseURL: double.openaiURL, apiKey: 'sk-double' },
        anthropic: {
          baseURL: double.anthropicURL,
          apiKey: 'sk-ant-double',
          ...(opts.anthropic?.maxTokens ? { maxTokens: opts.anthropic.maxTokens } : {}),
          ...(opts.anthropic?.thinking ? { thinking: ThinkingSchema.parse(opts.anthropic.thinking) } : {}),
        },
      },
      model: 'openai/double-model',
      stallMs: 2_000,
      backoffMs: [20, 40],
      ...opts.config,
    },
  })
  const agent = agentFor(engine, config)
  // A session that cannot start fails the test; the engine and the double must not keep the
  // test process alive after it (it would hang until the runner's timeout).
  const s = await engine.createSession({ roots: [root], shell: opts.shell ?? false }).catch(async (err) => {
    await engine.close()
    await double.close()
    throw err
  })
  const events: AgentEvent[] = []
  agent.subscribe(s.id, (ev) => events.push(ev))
  const h: Harness = {
    home,
    root,
    engine,
    agent,
    double,
    sessionId: s.id,
    events,
    async restart() {
      await h.engine.close()
      h.engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
      h.agent = agentFor(h.engine, config)
      h.agent.subscribe(h.sessionId, (ev) => events.push(ev))
    },
    async close() {
      await h.engine.close()
      await double.close()
    },
  }
  return h
}

// Polls until the condition holds (no fixed sleeps).
export async function until(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now()
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

// The text of the last message of a recorded Chat Completions request.
export const lastChatMessage = (body: any) => body.messages[body.messages.length - 1]

// The reasoning stored with each iteration of a turn, in order (null: none).
export const storedReasoning = (h: Harness, turnId: string): unknown[] =>
  (
    h.engine.store.db
      .prepare('SELECT reasoning FROM iterations WHERE turn_id = ? ORDER BY position')
      .all(turnId) as { reasoning: string | null }[]
  ).map((x) => (x.reasoning === null ? null : JSON.parse(x.reasoning)))
