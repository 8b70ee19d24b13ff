import { randomUUID } from 'node:crypto'
import { checkRootPaths } from '../../confinement/root-guard.js'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { VisError } from '../../util/errors.js'

export const DEFAULT_LABEL = 'default'

// The most live sessions (each a worker process, ~60 MB) one MCP client keeps by label. A model
// that names a new label for each call would otherwise start a worker per call and keep them all
// until the client goes away; at the bound the label used least recently that runs no block is
// closed (its transcript kept; its next block starts a fresh session and says so), and when every
// one runs a block the new label is refused (`mcp.client-sessions-full`).
export const DEFAULT_MAX_CLIENT_SESSIONS = 16
const MAX_EVICTED_REMEMBERED = 1000

// A label's session, and what it was started with.
export type Ensured = {
  id: string
  // The session this label had before, closed because the client's roots changed since it
  // started (a running interpreter's jail cannot be narrowed in place).
  replaced?: { id: string; roots: string[] }
  // This label's session was closed to keep the client within its bound of live sessions.
  evicted?: true
}

// The vis sessions one MCP client has used, by the label it gave (`session` argument; none
// means "default"). A client reaches only sessions it created itself: labels are looked up in
// its own map, never as engine ids, so two clients can never see each other's sessions.
export class ClientSessions {
  private readonly byLabel = new Map<string, string>()
  private readonly rootsOf = new Map<string, string[]>()
  private readonly creating = new Map<string, Promise<string>>()
  // When each label was last asked for, and how many blocks each runs now (never closed for room).
  private readonly lastUsed = new Map<string, number>()
  private readonly running = new Map<string, number>()
  private used = 0
  // Labels whose session was closed for room, until their next block says so.
  private readonly evicted = new Set<string>()
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
    readonly maxLive = DEFAULT_MAX_CLIENT_SESSIONS,
  ) {}

  // Marks a block of `label` running until the returned function is called: its session is not
  // closed to make room meanwhile.
  busy(label: string = DEFAULT_LABEL): () => void {
    this.running.set(label, (this.running.get(label) ?? 0) + 1)
    let done = false
    return () => {
      if (done) return
      done = true
      const n = (this.running.get(label) ?? 1) - 1
      if (n > 0) this.running.set(label, n)
      else this.running.delete(label)
    }
  }

  // The label's session, created on first use with the client's policy. One started with other
  // roots than the policy's now is closed and started afresh: a client that narrowed its roots
  // must not keep a session that still sees the wider ones.
  async ensure(label: string | undefined, policy: McpServePolicy): Promise<Ensured> {
    label ??= DEFAULT_LABEL
    this.lastUsed.set(label, ++this.used)
    const have = this.byLabel.get(label)
    const had = have === undefined ? undefined : this.rootsOf.get(have)
    if (have !== undefined && had !== undefined && sameRoots(had, policy.roots)) return { id: have }
    if (have !== undefined) {
      await this.reset(label)
      return { id: await this.create(label, policy), replaced: { id: have, roots: had ?? [] } }
    }
    const id = await this.create(label, policy)
    if (!this.evicted.delete(label)) return { id }
    return { id, evicted: true }
  }

  // Closes the least recently used label that runs no block while this client is at its bound.
  private async makeRoom(label: string): Promise<void> {
    while (this.byLabel.size + this.creating.size > this.maxLive) {
      let oldest: string | undefined
      for (const l of this.byLabel.keys()) {
        if (l === label || this.running.has(l)) continue
        if (oldest === undefined || (this.lastUsed.get(l) ?? 0) < (this.lastUsed.get(oldest) ?? 0)) oldest = l
      }
      if (oldest === undefined)
        throw new VisError(
          'mcp.client-sessions-full',
          `This client already keeps ${this.maxLive} live sessions and every one is running a block, so session ` +
            `${JSON.stringify(label)} cannot start now; use one of your sessions, close one with session_reset, ` +
            'or try again when a block ends.',
          { sessionId: 'mcp', op: 'python_execution', label, maxSessions: this.maxLive },
        )
      await this.reset(oldest)
      this.lastUsed.delete(oldest)
      this.evicted.add(oldest)
      // Remembered for the note only: a client naming endless labels keeps a bounded set.
      if (this.evicted.size > MAX_EVICTED_REMEMBERED)
        this.evicted.delete(this.evicted.values().next().value as string)
    }
  }

  private create(label: string, policy: McpServePolicy): Promise<string> {
    // Another call made it meanwhile (both saw the roots change).
    const made = this.byLabel.get(label)
    if (made !== undefined) return Promise.resolve(made)
    let p = this.creating.get(label)
    if (!p) {
      const name = label
      p = Promise.resolve()
        .then(() => this.makeRoom(name))
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
