import { VisError } from '../util/errors.js'
import type { Json, Resource, ResourceRegistry } from './types.js'

// A session's long-lived resources, by id.
export class SessionResources implements ResourceRegistry {
  private readonly items = new Map<string, Resource>()
  private disposed = false

  add(resource: Resource): void {
    if (this.disposed) {
      void resource.stop()
      throw new VisError('tool.session-closed', 'the session is closed; it cannot start anything new', {})
    }
    if (this.items.has(resource.id)) {
      throw new VisError(
        'tool.resource-exists',
        `a resource with id '${resource.id}' already exists; stop it first`,
        {
          id: resource.id,
        },
      )
    }
    this.items.set(resource.id, resource)
  }

  get(id: string): Resource | undefined {
    return this.items.get(id)
  }

  list(): { [key: string]: Json }[] {
    return [...this.items.values()].map((r) => ({ id: r.id, kind: r.kind, ...r.describe() }))
  }

  async stop(id: string): Promise<boolean> {
    const r = this.items.get(id)
    if (!r) return false
    try {
      await r.stop()
    } finally {
      this.items.delete(id)
    }
    return true
  }

  async dispose(): Promise<void> {
    this.disposed = true
    const all = [...this.items.values()]
    this.items.clear()
    await Promise.allSettled(all.map((r) => r.stop()))
  }
}
