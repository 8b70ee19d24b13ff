import type { EgressRequest, EgressVerdict } from './evaluate.js'

// The connections a proxy has open (CONNECT tunnels, plain HTTP exchanges under way), each with
// the request and address it was allowed for. A tightening (setRules) re-judges every one with
// the new policy and cuts those it now refuses: removing a host from the list must stop the
// traffic already flowing to it (a held socket, a streaming download), not only the next
// connection. A tunnel carries no status line after its 200, so the cut is a close.
export type OpenConnection = { request: EgressRequest; address: string; cut(): void }

export class OpenConnections {
  private readonly open = new Set<OpenConnection>()

  // Registers a connection; the returned function forgets it (call it on close).
  add(c: OpenConnection): () => void {
    this.open.add(c)
    return () => this.open.delete(c)
  }

  // Cuts every connection `judge` now refuses; returns them with the verdict's reason.
  cutRefused(judge: (c: OpenConnection) => EgressVerdict): { connection: OpenConnection; reason: string }[] {
    const cut: { connection: OpenConnection; reason: string }[] = []
    for (const c of [...this.open]) {
      const v = judge(c)
      if (v.allowed) continue
      this.open.delete(c)
      c.cut()
      cut.push({ connection: c, reason: v.reason })
    }
    return cut
  }
}
