import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { within } from '../../util/path-within.js'

function real(p: string): string | undefined {
  try {
    return realpathSync(p)
  } catch {
    return undefined
  }
}

// The roots a client's sessions get: where the client's own roots (MCP `roots/list`) and the
// server's overlap, so a client can narrow what its sessions see but never widen it. A client
// root inside a server root is kept; a server root inside a client root is kept; the rest go.
// Paths are compared after resolving symlinks, so a link inside a root cannot lead out of it.
export function narrowRoots(serverRoots: readonly string[], clientRoots: readonly string[]): string[] {
  const out: string[] = []
  const servers = serverRoots.map(real).filter((p): p is string => p !== undefined)
  for (const c of clientRoots.map(real)) {
    if (c === undefined) continue
    for (const s of servers) {
      const keep = within(c, s) ? c : within(s, c) ? s : undefined
      if (keep !== undefined && !out.includes(keep)) out.push(keep)
    }
  }
  return out
}

// File URIs of a roots/list answer as paths; other schemes name nothing on this machine.
export function rootPaths(roots: readonly { uri: string }[]): string[] {
  const out: string[] = []
  for (const r of roots) {
    if (!r.uri.startsWith('file://')) continue
    try {
      out.push(fileURLToPath(r.uri))
    } catch {
      // A malformed file URI names no directory.
    }
  }
  return out
}

export type RootsAsker = () => Promise<{ uri: string }[]>

// One client's effective policy: the server's, narrowed by the client's roots when it offers
// them; asked again after the client says its roots changed (new sessions only).
export class ClientPolicy {
  private current: Promise<McpServePolicy> | undefined

  constructor(
    private readonly server: McpServePolicy,
    // Whether the client offers roots at all.
    private readonly offersRoots: () => boolean,
  ) {}

  // `ask` lists the client's roots; it goes out on the request being served, so it reaches the
  // client on that request's own stream (Streamable HTTP needs no standalone stream for it).
  get(ask: RootsAsker): Promise<McpServePolicy> {
    this.current ??= this.resolve(ask)
    return this.current
  }

  // The server's own roots: every client root lies beneath one of them.
  get serverRoots(): readonly string[] {
    return this.server.roots
  }

  invalidate(): void {
    this.current = undefined
  }

  private async resolve(ask: RootsAsker): Promise<McpServePolicy> {
    if (!this.offersRoots()) return this.server
    let roots: string[]
    try {
      roots = rootPaths(await ask())
    } catch {
      // A client that offers roots but cannot list them gets the server's.
      this.current = undefined
      return this.server
    }
    return { ...this.server, roots: narrowRoots(this.server.roots, roots) }
  }
}
