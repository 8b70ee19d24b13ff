import type { DraftState } from '../drafts/drafts.js'
import type { ExtensionRegistry, LoadedExtension } from '../extensions/index.js'
import { type Attachment, type Block, iso, isoOrNull, type Session } from '../persistence/index.js'
import { SurvivedSchema } from '../sessions/survived.js'
import type { AttachmentView, BlockView, ExtensionList, ExtensionView, SessionView } from './schemas.js'
import { shownPolicy } from './stored-policy.js'

export function attachmentView(sessionId: string, a: Attachment): AttachmentView {
  return {
    id: a.id,
    block_id: a.blockId,
    media_type: a.mediaType,
    name: a.name,
    size: a.size,
    sha256: a.sha256,
    url: `/v1/sessions/${encodeURIComponent(sessionId)}/attachments/${encodeURIComponent(a.id)}`,
  }
}

export function blockView(b: Block, attachments: readonly Attachment[]): BlockView {
  return {
    id: b.id,
    session_id: b.sessionId,
    turn_id: b.turnId,
    position: b.position,
    status: b.status,
    code: b.code,
    stdout: b.stdout,
    result: b.result,
    value: b.value,
    error: b.error,
    duration_ms: b.durationMs,
    timed_out: b.timedOut,
    survived: b.survived === null ? null : (SurvivedSchema.safeParse(b.survived).data ?? null),
    created_at: iso(b.createdAt),
    finished_at: isoOrNull(b.finishedAt),
    attachments: attachments.filter((a) => a.blockId === b.id).map((a) => attachmentView(b.sessionId, a)),
  }
}

export function sessionView(
  s: Session,
  worker: SessionView['worker'],
  busy: boolean,
  draft?: DraftState,
): SessionView {
  return {
    id: s.id,
    title: s.title,
    policy: shownPolicy(s.policy),
    state: s.closedAt === null ? 'open' : 'closed',
    worker: s.closedAt === null ? worker : 'closed',
    busy,
    created_at: iso(s.createdAt),
    closed_at: isoOrNull(s.closedAt),
    last_event_id: s.lastEventSeq,
    ...(draft ? { draft } : {}),
  }
}

// One loaded extension with its tools as the model sees them (`vis ext list` prints the same).
export function extensionView(reg: ExtensionRegistry, e: LoadedExtension): ExtensionView {
  return {
    name: e.manifest.name,
    key: e.key,
    scope: e.scope,
    path: e.path,
    version: e.manifest.version,
    alias: e.manifest.alias,
    description: e.manifest.description,
    tools: reg.toolsOf(e.manifest.name).map((t) => `${t.name}${t.signature}`),
    hooks: e.manifest.op_hooks.map((h) => `${h.when} ${h.tool}`),
  }
}

export function extensionList(reg: ExtensionRegistry | undefined): ExtensionList {
  if (!reg) return { extensions: [], warnings: [], shadowed: [], dirs: [] }
  return {
    extensions: reg.list().map((e) => extensionView(reg, e)),
    warnings: reg.warnings().map((w) => ({
      key: w.key,
      path: w.path,
      scope: w.scope,
      reason: w.reason,
      kept_previous: w.keptPrevious ?? false,
    })),
    shadowed: reg.shadowed().map((s) => s.path),
    dirs: reg.dirs,
  }
}
