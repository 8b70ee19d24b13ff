import { resolve } from 'node:path'
import { type AgentConfig, loadAgentConfig, resolveModel } from '../../agent/config.js'
import { SESSION_MODES, type SessionMode, SessionModeSchema } from '../../confinement/modes.js'
import { VisError } from '../../util/errors.js'

// The agent commands' options, read without loading the engine (vis run sends its first model
// request before the engine is loaded: src/cli/agent/first-request.ts).

export const AGENT_OPTIONS = {
  model: { type: 'string' },
  'max-iterations': { type: 'string' },
  root: { type: 'string' },
  shell: { type: 'boolean', default: false },
  network: { type: 'boolean', default: false },
  'read-only': { type: 'boolean', default: false },
  review: { type: 'boolean', default: false },
  mode: { type: 'string' },
  approve: { type: 'string' },
  session: { type: 'string' },
} as const

export const AGENT_USAGE = `  --model P/M          <provider>/<model> (default VIS_MODEL or "model" in ~/.vis/agent.json);
                       providers: openai, openai-responses, anthropic, ollama, lmstudio, vllm, llamacpp
  --max-iterations N   blocks per turn before the model is asked for its best answer (default 30)
  --root DIR           the session's root (default: the current directory)
  --shell              bind the shell tool
  --network            open the network (default closed)
  --read-only          the session reads its root but changes nothing (blocks, file tools, git, shell)
  --review             the turn writes a draft of the root; at its end the diff is shown to apply or drop
  --mode M             workspace (default, or "mode" in ~/.vis/agent.json), read-only or review
  --approve ask|approve|deny
                       tool calls that need approval: ask on the terminal (default when it is one),
                       or approve/deny them all (deny is the default without a terminal);
                       what --read-only/--review require approval for is always asked, never
                       auto-approved (refused without a terminal)
  --session ID         continue a stored session instead of creating one`

export type AgentCliOptions = {
  model?: string
  'max-iterations'?: string
  root?: string
  shell?: boolean
  network?: boolean
  'read-only'?: boolean
  review?: boolean
  mode?: string
  approve?: string
  session?: string
}

// The session's mode: the flags, else agent.json's "mode", else workspace.
export function cliMode(v: AgentCliOptions, config: { mode?: SessionMode }): SessionMode {
  const given = [
    ...(v['read-only'] ? ['read-only'] : []),
    ...(v.review ? ['review'] : []),
    ...(v.mode !== undefined ? [v.mode] : []),
  ]
  if (new Set(given).size > 1) {
    throw new VisError('cli.bad-option', `choose one mode: ${given.join(' and ')} were both given`)
  }
  const mode = given[0] ?? config.mode ?? 'workspace'
  const parsed = SessionModeSchema.safeParse(mode)
  if (!parsed.success) {
    throw new VisError('cli.bad-option', `--mode must be ${SESSION_MODES.join(', ')}, not ${mode}`)
  }
  return parsed.data
}

// A session's title from the task that started it: its first line, short enough for a list.
export function titleFromTask(task: string): string {
  const first =
    task
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? ''
  return first.length > 72 ? `${first.slice(0, 71)}…` : first || 'vis agent'
}

// What the options and agent.json decide before any engine exists: the config (with the
// --approve rule), the session's mode, its root, the iteration cap. The model is resolved here,
// so a missing key or model is reported before any worker starts.
export type PreparedAgentCli = {
  config: AgentConfig
  mode: SessionMode
  root: string
  maxIterations?: number
}

export function prepareAgentCli(v: AgentCliOptions, interactive: boolean): PreparedAgentCli {
  const approve = v.approve ?? (interactive ? 'ask' : 'deny')
  if (approve !== 'ask' && approve !== 'approve' && approve !== 'deny') {
    throw new VisError('cli.bad-option', `--approve must be ask, approve or deny, not ${approve}`)
  }
  const max = v['max-iterations'] === undefined ? undefined : Number(v['max-iterations'])
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    throw new VisError('cli.bad-option', '--max-iterations must be a positive integer')
  }
  const base = loadAgentConfig()
  // Without a terminal nobody answers: what only a person may approve (a read-only or review
  // session's outside tools) is refused even under --approve approve.
  const config: AgentConfig = {
    ...base,
    approvals: { ...base.approvals, auto: approve },
    personAnswers: interactive,
  }
  resolveModel(v.model, config)
  const mode = cliMode(v, config)
  return { config, mode, root: resolve(v.root ?? process.cwd()), ...(max ? { maxIterations: max } : {}) }
}
