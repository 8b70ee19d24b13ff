import type { BindOptions } from '../sessions/session.js'
import type { Agent, AgentListener, StartedTurn, TurnOptions, TurnResult } from './host.js'
import type { ApprovalView, ToolCallView, TurnView } from './schemas.js'
import type { CostedUsage } from './usage.js'

// One engine session seen from the agent: `await session.turn(prompt)` and the rest, without
// passing the session id around.
export class AgentSession {
  constructor(
    readonly agent: Agent,
    readonly id: string,
  ) {}

  turn(prompt: string, opts: TurnOptions = {}): Promise<TurnResult> {
    return this.agent.turn(this.id, prompt, opts)
  }

  startTurn(prompt: string, opts: TurnOptions = {}): Promise<StartedTurn> {
    return this.agent.startTurn(this.id, prompt, opts)
  }

  cancel(turnId: string): boolean {
    return this.agent.cancel(this.id, turnId)
  }

  // turn.started, model.delta, block.started, block.output, block.ended, approval.requested,
  // approval.resolved, turn.completed, turn.failed, turn.cancelled (and iteration.started,
  // model.reply, model.retry, turn.warning).
  on(fn: AgentListener): () => void {
    return this.agent.subscribe(this.id, fn)
  }

  // A host function as a tool of this session's worker (`approval: 'required'` gates each call).
  async bind(name: string, fn: (...args: any[]) => unknown, opts: BindOptions = {}): Promise<void> {
    await (await this.agent.engine.runtimeSession(this.id)).bind(name, fn, opts)
  }

  turns(): TurnView[] {
    return this.agent.listTurns(this.id)
  }

  journal(turnId: string): ToolCallView[] {
    return this.agent.journal(this.id, turnId)
  }

  approvals(status?: ApprovalView['status']): ApprovalView[] {
    return this.agent.listApprovals(this.id, status)
  }

  decide(approvalId: string, decision: 'approve' | 'deny', by?: string, note?: string): ApprovalView {
    return this.agent.decide(this.id, approvalId, decision, by, note)
  }

  usage(): CostedUsage {
    return this.agent.sessionUsage(this.id)
  }
}
