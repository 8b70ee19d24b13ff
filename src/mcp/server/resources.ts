import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js'
import type { Engine } from '../../engine/engine.js'
import { exportTranscript, renderMarkdown } from '../../persistence/index.js'
import { VisError } from '../../util/errors.js'
import type { ClientSessions } from './sessions.js'

// Each session a client created is readable as resources: its transcript (Markdown, as
// `vis sessions export` prints it) and every attachment its blocks produced.
export const transcriptUri = (sessionId: string) =>
  `vis://sessions/${encodeURIComponent(sessionId)}/transcript`
export const attachmentUri = (sessionId: string, attachmentId: string) =>
  `vis://sessions/${encodeURIComponent(sessionId)}/attachments/${encodeURIComponent(attachmentId)}`

const URI = /^vis:\/\/sessions\/([^/]+)\/(transcript|attachments\/([^/]+))$/

export function listResources(engine: Engine, sessions: ClientSessions): Resource[] {
  const out: Resource[] = []
  for (const id of sessions.created) {
    const detail = engine.getSession(id)
    out.push({
      uri: transcriptUri(id),
      name: `${id} transcript`,
      title: detail.title ?? id,
      mimeType: 'text/markdown',
      description: `Every block of session ${id} with its output (${detail.blocks.length} blocks, ${detail.state}).`,
    })
    for (const b of detail.blocks) {
      for (const a of b.attachments) {
        out.push({
          uri: attachmentUri(id, a.id),
          name: a.name ?? a.id,
          mimeType: a.media_type,
          size: a.size,
          description: `attachment of block ${b.position} of session ${id}`,
        })
      }
    }
  }
  return out
}

export function readResource(engine: Engine, sessions: ClientSessions, uri: string): ReadResourceResult {
  const m = URI.exec(uri)
  const sessionId = m ? decodeURIComponent(m[1]!) : undefined
  // Another client's session reads exactly like one that does not exist.
  if (!m || sessionId === undefined || !sessions.owns(sessionId)) {
    throw new VisError('mcp.resource-not-found', `No resource ${uri} among this client's sessions.`, { uri })
  }
  if (m[2] === 'transcript') {
    const text = renderMarkdown(exportTranscript(engine.store, sessionId))
    return { contents: [{ uri, mimeType: 'text/markdown', text }] }
  }
  const { attachment, data } = engine.attachment(sessionId, decodeURIComponent(m[3]!))
  const mimeType = attachment.media_type
  if (mimeType.startsWith('text/') || mimeType === 'application/json') {
    return { contents: [{ uri, mimeType, text: data.toString('utf8') }] }
  }
  return { contents: [{ uri, mimeType, blob: data.toString('base64') }] }
}
