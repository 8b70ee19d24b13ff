import type { BoundTool } from '../sessions/tool-table.js'
import type { Tool } from '../tools/types.js'

type Binder = { bindTool(tool: BoundTool | Tool): Promise<void> }

// Tools that read and never act: bound as they are.
const LISTING = new Set(['mcp_servers'])

// In a read-only or review session (src/confinement/modes.ts) the jail keeps the roots from
// changing, but trusted extensions' tools and MCP servers' tools run on the host, outside it:
// each of their calls waits for a person's approval (src/agent/approvals.ts), so nothing lands
// unless someone lets it. A person's: an auto-policy that approves everything would turn the
// mode's promise off, so `approvalBy: 'person'` keeps it out. The host's own tools
// (`hostNames`) already honour the mode.
export function gateOutsideTools<S extends Binder>(session: S, hostNames: ReadonlySet<string>): S {
  const bindTool = (tool: BoundTool | Tool) =>
    session.bindTool(
      hostNames.has(tool.name) || LISTING.has(tool.name)
        ? tool
        : { ...tool, approval: 'required' as const, approvalBy: 'person' as const },
    )
  return new Proxy(session, {
    get(target, key) {
      if (key === 'bindTool') return bindTool
      const v = Reflect.get(target, key, target)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
}
