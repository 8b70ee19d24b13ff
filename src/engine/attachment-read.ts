import { VisError } from '../util/errors.js'
import { type EngineCore, requireSession } from './engine-core.js'
import type { AttachmentView } from './schemas.js'
import { attachmentView } from './views.js'

// An attachment of a session's block with its bytes; one of another session is not found.
export function readAttachment(
  core: EngineCore,
  sessionId: string,
  attachmentId: string,
): { attachment: AttachmentView; data: Buffer } {
  requireSession(core, sessionId)
  const meta = core.store.attachments.get(attachmentId)
  const owner = meta ? core.store.blocks.get(meta.blockId)?.sessionId : undefined
  if (!meta || owner !== sessionId) {
    throw new VisError('attachment.not-found', `No attachment ${attachmentId} in session ${sessionId}.`, {
      sessionId,
      attachmentId,
    })
  }
  const { attachment, data } = core.store.attachments.read(attachmentId)
  return { attachment: attachmentView(sessionId, attachment), data }
}
