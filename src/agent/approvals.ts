import { VisError } from '../util/errors.js'
import type { AgentConfig } from './config.js'
import type { AgentRecords } from './records.js'
import type { ApprovalView } from './schemas.js'

type Waiter = { resolve: (v: ApprovalView) => void; sessionId: string }

export type ApprovalRequest = {
  sessionId: string
  turnId: string | null
  blockId: string | null
  tool: string
  args: unknown
  reason: string
  signal: AbortSignal
  // Only a person may approve it (the session's mode requires it: tool-table.ts `approvalBy`).
  person?: boolean
}

// Pending approvals: a tool call waits here until a person (HTTP, vis chat) or the auto-policy
// decides, the block is interrupted (its call's signal aborts), or the approval times out.
export class Approvals {
  private readonly waiting = new Map<string, Waiter>()

  constructor(
    private readonly records: AgentRecords,
    private readonly config: AgentConfig,
    private readonly announce: (a: ApprovalView, type: 'approval.requested' | 'approval.resolved') => void,
  ) {}

  // How long one approval waits for a decision.
  get timeoutMs(): number {
    return this.config.approvals.timeoutMs
  }

  // Whether a call needs approval: the tool says so, or a configured rule matches its arguments.
  reason(
    tool: { name: string; approval?: 'required'; approvalBy?: 'person' },
    argsJson: string,
  ): string | undefined {
    if (tool.approvalBy === 'person')
      return `${tool.name} runs outside the jail, and the session's mode lets only a person approve it`
    if (tool.approval === 'required') return `${tool.name} is bound with approval: required`
    for (const rule of this.config.approvals.rules) {
      if (rule.tool !== tool.name) continue
      if (rule.match === undefined) return `the rule for ${tool.name} matches every call`
      if (new RegExp(rule.match).test(argsJson)) return `the rule for ${tool.name} matches /${rule.match}/`
    }
    return undefined
  }

  // Resolves with the approved record; throws tool.denied / tool.approval-cancelled.
  async request(req: ApprovalRequest): Promise<ApprovalView> {
    const created = this.records.addApproval(req)
    const auto = this.policy(req)
    // The waiter is in place before anyone hears of the approval: a listener may decide at once.
    const waiting = auto === 'ask' ? this.wait(created.id, req.sessionId, req.signal) : undefined
    this.announce(created, 'approval.requested')
    const settled =
      waiting !== undefined
        ? await waiting
        : (this.settle(
            created.id,
            auto === 'approve' ? 'approved' : 'denied',
            'policy',
            auto === 'nobody'
              ? `the session's mode requires a person's approval and nobody can answer here (approvals.auto "approve" does not cover it)`
              : `auto-policy: ${auto}`,
          ) ?? this.records.approval(created.id)!)
    if (settled.status === 'approved') return settled
    const who = settled.decided_by ?? 'nobody'
    if (settled.status === 'denied') {
      throw new VisError(
        'tool.denied',
        `${req.tool}: the call was denied by ${who}${settled.note ? `: ${settled.note}` : ''}`,
        { sessionId: req.sessionId, tool: req.tool, approvalId: created.id },
      )
    }
    throw new VisError(
      'tool.approval-cancelled',
      `${req.tool}: the approval was cancelled (${settled.note ?? 'no reason'}); the call did not run`,
      { sessionId: req.sessionId, tool: req.tool, approvalId: created.id },
    )
  }

  // How this request is decided. An auto-policy that approves everything never approves what
  // only a person may (a read-only or review session's outside tools): that goes to a person,
  // or is refused when nobody can answer (vis run without a terminal).
  private policy(req: ApprovalRequest): 'ask' | 'approve' | 'deny' | 'nobody' {
    const auto = this.config.approvals.auto
    if (auto !== 'approve' || !req.person) return auto
    return this.config.personAnswers === false ? 'nobody' : 'ask'
  }

  private wait(id: string, sessionId: string, signal: AbortSignal): Promise<ApprovalView> {
    return new Promise((resolve) => {
      const done = (v: ApprovalView) => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.waiting.delete(id)
        resolve(v)
      }
      const onAbort = () => {
        const v = this.settle(id, 'cancelled', null, 'the block was interrupted while waiting')
        if (v) done(v)
      }
      const ms = this.config.approvals.timeoutMs
      const timer = setTimeout(() => {
        const v = this.settle(id, 'cancelled', null, `no decision within ${ms} ms`)
        if (v) done(v)
      }, ms)
      timer.unref()
      this.waiting.set(id, { resolve: done, sessionId })
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  // A person's decision. Refused for an approval that is not pending (decided, cancelled, unknown).
  decide(
    sessionId: string,
    id: string,
    decision: 'approve' | 'deny',
    by: string,
    note?: string,
  ): ApprovalView {
    const current = this.records.approval(id)
    if (!current || current.session_id !== sessionId) {
      throw new VisError('approval.not-found', `No approval ${id} in session ${sessionId}.`, {
        sessionId,
        approvalId: id,
      })
    }
    const v = this.settle(id, decision === 'approve' ? 'approved' : 'denied', by, note ?? null)
    if (!v) {
      throw new VisError('approval.settled', `Approval ${id} is already ${current.status}.`, {
        sessionId,
        approvalId: id,
      })
    }
    return v
  }

  private settle(
    id: string,
    status: 'approved' | 'denied' | 'cancelled',
    by: string | null,
    note: string | null,
  ): ApprovalView | undefined {
    if (!this.records.settleApproval(id, status, by, note)) return undefined
    const v = this.records.approval(id)!
    this.announce(v, 'approval.resolved')
    this.waiting.get(id)?.resolve(v)
    return v
  }
}
