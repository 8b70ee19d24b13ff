import { randomUUID } from 'node:crypto'
import { checkRootPaths } from '../../confinement/root-guard.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'

export const DEFAULT_LABEL = 'default'

// A label's session, and what it was started with.
export type Ensured = {
  id: string
  // The session this label had before, closed because the client's roots changed since it
  // started (a running interpreter's jail cannot be narrowed in place).
  replaced?: { id: string; roots: string[] }
}

// The vis sessions one MCP client has used, by the label it gave (`session` argument; none
// means "default"). A client reaches only sessions it created itself: labels are looked up in
// its own map, never as engine ids, so two clients can never see each other's sessions.
export class ClientSessions {
  private readonly byLabel = new Map<string, string>()
  private readonly rootsOf = new Map<string, string[]>()
  private readonly creating = new Map<string, Promise<string>>()
  // Every engine session this client ever created (resets included): its resources.
  readonly created: string[] = []
  // Names this MCP session in the resources/list cursors it is given (resources.ts): a cursor
  // given to another MCP session does not verify here.
  readonly cursorScope = randomUUID()

  constructor(
    private readonly engine: Engine,
    private readonly title: string,
    // The server's own roots: every root of this client's sessions must still resolve beneath
    // one when its jail is built, whatever a path was swapped for after the narrowing.
    private readonly serverRoots: readonly string[],
    // The server roots' identities at its start: checked again when a session is created, and
    // held for a session root that is one of them.
    private readonly serverPins?: Readonly<Record<string, string>>,
  ) {}

  // The label's session, created on first use with the client's policy. One started with other
  // roots than the policy's now is closed and started afresh: a client that narrowed its roots
  // must not keep a session that still sees the wider ones.
  async ensure(label: string | undefined, policy: McpServePolicy): Promise<Ensured> {
    label ??= DEFAULT_LABEL
    const have = this.byLabel.get(label)
    const had = have === undefined ? undefined : this.rootsOf.get(have)
    if (have !== undefined && had !== undefined && sameRoots(had, policy.roots)) return { id: have }
    if (have !== undefined) {
      await this.reset(label)
      return { id: await this.create(label, policy), replaced: { id: have, roots: had ?? [] } }
    }
    return { id: await this.create(label, policy) }
  }

  private create(label: string, policy: McpServePolicy): Promise<string> {
    // Another call made it meanwhile (both saw the roots change).
    const made = this.byLabel.get(label)
    if (made !== undefined) return Promise.resolve(made)
    let p = this.creating.get(label)
    if (!p) {
      const name = label
      p = Promise.resolve()
        .then(() => {
          if (this.serverPins)
            checkRootPaths(
              this.serverRoots,
              { pins: this.serverPins },
              { sessionId: 'mcp', op: 'create-session' },
            )
        })
        .then(() =>
          this.engine.createSession(
            {
              title: `${this.title} (${name})`,
              roots: policy.roots,
              network: policy.network,
              shell: false,
              ...(policy.mode ? { mode: policy.mode } : {}),
            },
            { within: [...this.serverRoots], ...(this.serverPins ? { pins: this.serverPins } : {}) },
          ),
        )
        .then((v) => {
          this.byLabel.set(name, v.id)
          this.rootsOf.set(v.id, [...policy.roots])
          this.created.push(v.id)
          return v.id
        })
        .finally(() => this.creating.delete(name))
      this.creating.set(label, p)
    }
    return p
  }

  get(label: string = DEFAULT_LABEL): string | undefined {
    return this.byLabel.get(label)
  }

  owns(sessionId: string): boolean {
    return this.created.includes(sessionId)
  }

  // Closes the label's session (its history stays readable); the next block starts a fresh one.
  // With `only`, nothing happens unless that is still the label's session (another call may
  // have replaced it already).
  async reset(label: string = DEFAULT_LABEL, only?: string): Promise<string | undefined> {
    const id = this.byLabel.get(label)
    if (!id || (only !== undefined && id !== only)) return undefined
    this.byLabel.delete(label)
    await this.engine.closeSession(id)
    return id
  }

  // The client went away: its live sessions are closed, their transcripts kept.
  async closeAll(): Promise<void> {
    const ids = [...this.byLabel.values()]
    this.byLabel.clear()
    await Promise.allSettled(ids.map((id) => this.engine.closeSession(id)))
  }
}

const sameRoots = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((r, i) => r === [...b].sort()[i])
