import { z } from 'zod'
import type { Engine } from '../engine/engine.js'
import type { Session } from '../sessions/session.js'
import type { BoundTool } from '../sessions/tool-table.js'
import { resolveAgent } from '../skills/agent-definition.js'
import { skillsOf } from '../skills/session-skills.js'
import type { ToolContext } from '../tools/types.js'
import { isVisError, VisError } from '../util/errors.js'
import type { TurnBudget } from './budget.js'
import { allowedChildModel, type ChildModelRule } from './child-models.js'
import type { CallScope } from './journal.js'
import type { Provider } from './providers/types.js'
import { type SubLoopConfig, SubLoopConfigSchema } from './sub-loop-config.js'

// `await sub_loop(prompt, *, model=None, max_iterations=None, roots=None)` from a block (issue 31
// §1): a child turn with its own conversation in a child session, a fork of the parent's: the
// same tools (bound by the engine for its roots), the parent's definitions as of its last
// finished block, its own globals, the same policy or a narrower one (roots within the parent's,
// each checked and pinned at its own jail: engine/roots.ts), its own confined worker. It answers
// with the child's answer as a str, or raises with the reason the child ended without one.
//
// Bounds: at most `concurrency` children of one parent turn at once (the rest wait, e.g. under
// `gather`), `maxDepth` levels of children below a turn of the person's, each child's iterations
// (`max_iterations`, default the agent's) and wall clock (`timeoutMs`). The parent block's own
// deadline is held while it waits (the child's clock bounds the wait), and the parent turn's
// cancel or interrupt cancels its children. Each child draws on the parent turn's token/cost
// budget (budget.ts): what is left of it is the child's, and a child that finds it spent ends
// with agent.budget-exceeded, raised in the parent's block.

export { type SubLoopConfig, SubLoopConfigSchema }

// Where a child turn came from: stored in its request (turns.request), read back into its view.
export const TurnParentSchema = z.object({
  session_id: z.string(),
  turn_id: z.string(),
  block_id: z.string().nullable(),
})
export type TurnParent = z.infer<typeof TurnParentSchema>

const OptionsSchema = z
  .object({
    model: z.string().min(3).max(300).nullable().optional(),
    max_iterations: z.number().int().min(1).max(1000).nullable().optional(),
    roots: z.array(z.string().min(1)).min(1).max(32).nullable().optional(),
  })
  .strict()
const ArgsSchema = z.union([
  z.tuple([z.string().min(1).max(1_000_000)]),
  z.tuple([z.string().min(1).max(1_000_000), OptionsSchema]),
])

// What the agent (host.ts) gives this module: its turns, and the parent turn's model and cancel.
export type SubLoopHost = {
  engine: Engine
  config: SubLoopConfig
  defaultMaxIterations: number
  // agent.json's model aliases (sonnet, opus, ...) for agent definitions' `model`.
  aliases: Readonly<Record<string, string>>
  // The models a child may be given (child-models.ts): only what the person configured now.
  models: () => ChildModelRule
  // Runs a child turn to its end (Agent.turn with its parent recorded).
  runChild: (
    sessionId: string,
    prompt: string,
    opts: {
      model?: string
      provider?: Provider
      maxIterations: number
      signal: AbortSignal
      parent: TurnParent
      // An agent definition's body: the child's role, after the system prompt's own text.
      instructions?: string
      // The parent turn's budget, which the child draws on.
      parentBudget: TurnBudget
    },
  ) => Promise<{ status: string; answer: string | null; error: { code: string; message: string } | null }>
  // The running parent turn's provider (a child without `model` uses it) and cancel signal.
  turnOf: (
    sessionId: string,
    turnId: string,
  ) => { provider: Provider; signal: AbortSignal; budget: TurnBudget } | undefined
}

// The host tools an agent definition's `tools` list may leave out (claude-map.ts maps its names).
const RESTRICTABLE = new Set([
  'cat',
  'ls',
  'grep',
  'patch',
  'write',
  'shell',
  'git',
  'move',
  'delete',
  'create_dirs',
])

class Slots {
  private active = 0
  private readonly waiting: Array<() => void> = []
  constructor(private readonly limit: number) {}
  async take(signal: AbortSignal): Promise<() => void> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', stop)
          resolve()
        }
        const stop = () => {
          const i = this.waiting.indexOf(go)
          if (i >= 0) this.waiting.splice(i, 1)
          reject(signal.reason)
        }
        this.waiting.push(go)
        signal.addEventListener('abort', stop, { once: true })
      })
    } else this.active++
    let given = false
    return () => {
      if (given) return
      given = true
      const next = this.waiting.shift()
      if (next) next()
      else this.active--
    }
  }
}

export class SubLoops {
  // Depth of each child session this agent made (a session of the person's is 0).
  private readonly depth = new Map<string, number>()
  // Slots per parent turn.
  private readonly slots = new Map<string, Slots>()

  constructor(private readonly host: SubLoopHost) {}

  depthOf(sessionId: string): number {
    return this.depth.get(sessionId) ?? 0
  }

  // Binds sub_loop into the session's worker once (a replacement worker gets it back with the
  // session's other bindings).
  async bindInto(session: Session, sessionId: string, scope: CallScope): Promise<void> {
    // At the deepest level the model is not offered it at all.
    if (this.depthOf(sessionId) >= this.host.config.maxDepth) return
    if (session.toolSpecs().some((t) => t.name === 'sub_loop')) return
    const tool: BoundTool = {
      name: 'sub_loop',
      doc:
        'Run a child agent turn on a fork of this session (its own conversation and globals, this ' +
        "session's tools and definitions, roots within this session's) and return its answer as a " +
        'str. Several run in parallel under gather(). Raises when the child ends without an answer. ' +
        "model: unset for this turn's model, else only one agent.json configures (or an alias it names).",
      signature: '(prompt, *, model=None, max_iterations=None, roots=None)',
      args: ArgsSchema,
      run: (args, ctx) => this.run(sessionId, scope, args as z.infer<typeof ArgsSchema>, ctx),
    }
    await session.bindTool(tool)
    // agent(name, prompt): an agent definition (src/skills) run as such a child.
    if ((skillsOf(session)?.agents.length ?? 0) > 0 && !session.toolSpecs().some((t) => t.name === 'agent')) {
      await session.bindTool({
        name: 'agent',
        doc:
          'Run the agent definition `name` (listed under # Agents) as a child turn with `prompt` as its task: ' +
          'its instructions, model and tools apply, on a fork of this session. Returns its answer as a str.',
        signature: '(name, prompt)',
        args: z.tuple([z.string().min(1).max(200), z.string().min(1).max(1_000_000)]),
        run: (args, ctx) => {
          const [name, prompt] = args as [string, string]
          const parentTurn = scope.turnId === null ? undefined : this.host.turnOf(sessionId, scope.turnId)
          const parentModel = parentTurn ? `${parentTurn.provider.name}/${parentTurn.provider.model}` : ''
          const def = resolveAgent(skillsOf(session)?.agents ?? [], name, parentModel, this.host.aliases, {
            sessionId,
          })
          return this.run(
            sessionId,
            scope,
            [prompt, def.model === parentModel ? undefined : { model: def.model }],
            ctx,
            {
              instructions: `# Your role: agent ${def.name}\n${def.system}`,
              ...(def.tools ? { tools: def.tools } : {}),
            },
          )
        },
      })
    }
  }

  private async run(
    parentId: string,
    scope: CallScope,
    [prompt, options]: [string, z.infer<typeof OptionsSchema> | undefined] | z.infer<typeof ArgsSchema>,
    ctx: ToolContext,
    // agent(): the definition's instructions, and the host tools it may use (others unbound).
    as: { instructions?: string; tools?: string[] } = {},
  ): Promise<string> {
    const { engine, config } = this.host
    const turnId = scope.turnId
    const blockId = scope.blockId
    const context = { sessionId: parentId, op: 'sub_loop' }
    if (turnId === null) {
      throw new VisError(
        'agent.sub-loop-outside-turn',
        'sub_loop() runs only in a block of an agent turn.',
        context,
      )
    }
    const depth = this.depthOf(parentId) + 1
    if (depth > config.maxDepth) {
      throw new VisError(
        'agent.sub-loop-depth',
        `sub_loop() may nest ${config.maxDepth} level(s) deep; this block is already at level ${depth - 1}. ` +
          'Do the work here instead.',
        { ...context, depth: depth - 1 },
      )
    }
    const parentTurn = this.host.turnOf(parentId, turnId)
    if (!parentTurn) {
      throw new VisError(
        'agent.sub-loop-outside-turn',
        'sub_loop() runs only in a block of an agent turn.',
        context,
      )
    }
    const left = parentTurn.budget.spent()
    if (left !== undefined) {
      throw new VisError('agent.budget-exceeded', `No budget is left for a child turn: ${left}.`, context)
    }
    // A model the block names is checked before anything else happens: the host's request to
    // an endpoint nobody configured would leave past the egress policy (child-models.ts).
    const parentModel = `${parentTurn.provider.name}/${parentTurn.provider.model}`
    const model = options?.model
      ? allowedChildModel(this.host.models(), options.model, parentModel, context)
      : undefined
    // The child's cancel: the parent turn's, the block call's (an interrupt), and its own clock.
    const clock = AbortSignal.timeout(config.timeoutMs)
    const signal = AbortSignal.any([parentTurn.signal, ctx.signal, clock])
    let slots = this.slots.get(turnId)
    if (!slots) {
      slots = new Slots(config.concurrency)
      this.slots.set(turnId, slots)
    }
    // Waiting for a slot and for the child does not count toward this block's deadline; the
    // child's own clock bounds it (plus a minute for its answer to be stored).
    const release = ctx.holdDeadline?.(config.timeoutMs + 60_000) ?? (() => {})
    let giveSlot: (() => void) | undefined
    let childId: string | undefined
    try {
      giveSlot = await slots.take(signal)
      // Its roots come from the parent's pinned roots (engine/roots.ts childPolicy): a parent
      // root swapped since refuses the child as it refuses the parent's own tools. A parent working in a
      // draft gives its child the draft (drafts.ts lend).
      const child = await engine.createChildSession(parentId, {
        ...(options?.roots ? { roots: options.roots } : {}),
        title: `sub_loop of ${parentId}: ${prompt.split('\n')[0]!.slice(0, 60)}`,
      })
      childId = child.id
      this.depth.set(childId, depth)
      // The parent's definitions as of its last finished block: the child starts where the
      // parent's session was, with globals of its own.
      const defs = engine.store.defs.get(parentId)
      if (defs !== undefined || as.tools) {
        const worker = await engine.runtimeSession(childId)
        if (defs !== undefined) await worker.callGuest('restore_defs', defs.snapshot)
        // An agent definition's `tools` narrow the host's file and process tools; the verbs
        // stay (sub_loop, skill, fold_session...).
        if (as.tools) {
          for (const t of worker.toolSpecs())
            if (RESTRICTABLE.has(t.name) && !as.tools.includes(t.name)) await worker.unbind(t.name)
        }
      }
      const end = await this.host.runChild(childId, prompt, {
        ...(model !== undefined && model !== parentModel ? { model } : { provider: parentTurn.provider }),
        maxIterations: options?.max_iterations ?? this.host.defaultMaxIterations,
        signal,
        parent: { session_id: parentId, turn_id: turnId, block_id: blockId },
        ...(as.instructions ? { instructions: as.instructions } : {}),
        parentBudget: parentTurn.budget,
      })
      if (end.status === 'done' && end.answer !== null) return end.answer
      if (end.error?.code === 'agent.budget-exceeded') {
        throw new VisError(
          'agent.budget-exceeded',
          `The child turn in session ${childId} ended without an answer: ${end.error.message}`,
          { ...context, childSessionId: childId },
        )
      }
      if (clock.aborted) {
        throw new VisError(
          'agent.sub-loop-timeout',
          `The child turn in session ${childId} ran past its ${Math.round(config.timeoutMs / 1000)} s limit (agent.json subLoops.timeoutMs) without an answer.`,
          { ...context, childSessionId: childId },
        )
      }
      throw new VisError(
        end.status === 'cancelled' ? 'agent.sub-loop-cancelled' : 'agent.sub-loop-failed',
        `The child turn in session ${childId} ended ${end.status} without an answer` +
          (end.error ? `: ${childError(end.error)}` : '.'),
        { ...context, childSessionId: childId, ...(end.error ? { cause: end.error.code } : {}) },
      )
    } catch (err) {
      if (isVisError(err)) throw err
      if (signal.aborted) {
        throw new VisError(
          'agent.sub-loop-cancelled',
          'The child turn was cancelled with its parent.',
          context,
        )
      }
      throw err
    } finally {
      giveSlot?.()
      release()
      // The child's session ends with its turn; its history stays (vis sessions show).
      if (childId !== undefined) await engine.closeSession(childId).catch(() => undefined)
    }
  }

  // The parent turn ended: its slots go.
  forgetTurn(turnId: string): void {
    this.slots.delete(turnId)
  }
}

// Why a child ended, as its parent's block may read it. A model request's failure carries what
// the endpoint answered (its body, its address in a connection error): the block learns the code
// (with its HTTP status) only; the person reads the whole error in the child turn's record.
function childError(error: { code: string; message: string }): string {
  if (error.code.startsWith('agent.model-')) {
    return `its model request failed (${error.code}); the child turn's record holds the details`
  }
  return error.message.length > 500 ? `${error.message.slice(0, 500)}…` : error.message
}
