import type { Agent } from '../../agent/host.js'
import { agentFor } from '../../agent/host.js'
import { type SessionMode, SessionModeSchema } from '../../confinement/modes.js'
import { createEngine, type Engine } from '../../engine/index.js'
import { untrustedNotices } from '../../extensions/trust.js'
import { VisError } from '../../util/errors.js'
import { type AgentCliOptions, type PreparedAgentCli, prepareAgentCli } from './options.js'
import { visibleControls } from './visible.js'

export {
  AGENT_OPTIONS,
  AGENT_USAGE,
  type AgentCliOptions,
  cliMode,
  titleFromTask,
} from './options.js'

export type AgentCli = {
  engine: Engine
  agent: Agent
  sessionId: string
  // Whether this command made the session (rather than continuing one with --session).
  created: boolean
  maxIterations?: number
  model?: string
  // The mode of the session this command made (the stored one with --session).
  mode: SessionMode
}

// The engine in the vis home, its agent, and the session the turns run in.
export async function openAgentCli(
  v: AgentCliOptions,
  interactive: boolean,
  title = 'vis agent',
  prepared: PreparedAgentCli = prepareAgentCli(v, interactive),
): Promise<AgentCli> {
  const { config, mode, root, maxIterations: max } = prepared
  const engine = await createEngine({ project: root })
  for (const n of untrustedNotices(engine.extensions?.warnings() ?? []))
    process.stderr.write(visibleControls(n))
  try {
    const agent = agentFor(engine, config)
    const sessionId =
      v.session ??
      (
        await engine.createSession({
          roots: [root],
          shell: v.shell,
          network: { enabled: v.network ?? false },
          ...(mode !== 'workspace' ? { mode } : {}),
          title,
        })
      ).id
    const stored = v.session === undefined ? mode : storedMode(engine, sessionId)
    // A mode flag with --session asks for that mode: a session keeps the mode it was made with
    // (its jail, draft and approvals were set up for it), so another one is refused rather than
    // silently ignored. agent.json's "mode" is only the default for new sessions.
    const asked = v['read-only'] || v.review || v.mode !== undefined
    if (asked && stored !== mode) {
      throw new VisError(
        'cli.session-mode-mismatch',
        `session ${sessionId} is in mode ${stored}, not ${mode}: a session keeps the mode it was made with. Continue it without a mode flag (or with --mode ${stored}), or leave out --session to start a ${mode} session`,
        { sessionId },
      )
    }
    return {
      engine,
      agent,
      sessionId,
      created: v.session === undefined,
      maxIterations: max,
      model: v.model,
      mode: stored,
    }
  } catch (err) {
    await engine.close()
    throw err
  }
}

function storedMode(engine: Engine, sessionId: string): SessionMode {
  const m = (engine.sessionView(sessionId).policy as { mode?: unknown }).mode
  return SessionModeSchema.safeParse(m).data ?? 'workspace'
}
