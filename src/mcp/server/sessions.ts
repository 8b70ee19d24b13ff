import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../config.js'

export const DEFAULT_LABEL = 'default'

// The vis sessions one MCP client has used, by the label it gave (`session` argument; none
// means "default"). A client reaches only sessions it created itself: labels are looked up in
// its own map, never as engine ids, so two clients can never see each other's sessions.
export class ClientSessions {
  private readonly byLabel = new Map<string, string>()
  private readonly creating = new Map<string, Promise<string>>()
  // Every engine session this client ever created (resets included): its resources.
  readonly created: string[] = []

  constructor(
    private readonly engine: Engine,
    private readonly title: string,
  ) {}

  // The label's session, created on first use with the client's policy.
  async ensure(label: string | undefined, policy: McpServePolicy): Promise<string> {
    label ??= DEFAULT_LABEL
    const have = this.byLabel.get(label)
    if (have) return have
    let p = this.creating.get(label)
    if (!p) {
      const name = label
      p = this.engine
        .createSession({
          title: `${this.title} (${name})`,
          roots: policy.roots,
          network: policy.network,
          shell: false,
        })
        .then((v) => {
          this.byLabel.set(name, v.id)
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
  async reset(label: string = DEFAULT_LABEL): Promise<string | undefined> {
    const id = this.byLabel.get(label)
    if (!id) return undefined
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
