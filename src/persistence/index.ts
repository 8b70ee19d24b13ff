// The persistence layer: one SQLite database (vis.db under the vis home), or PostgreSQL when
// VIS_DATABASE_URL is set (issue 19), and typed repositories that run unchanged on both.
export { type Attachment, type AttachmentInput, AttachmentSchema, AttachmentsRepo } from './attachments.js'
export { BlobStore } from './blob-store.js'
export {
  ATTACHMENT_BYTES,
  type Block,
  type BlockError,
  BlockErrorSchema,
  BlockSchema,
  type BlockStatus,
  BlocksRepo,
  type FinishBlockInput,
  type StartBlockInput,
  type StartedBlock,
} from './blocks.js'
export { type ConstraintKind, constraintViolation } from './constraint.js'
export { DB_FILE, type Durability, databasePath, openDatabase } from './database.js'
export { DefsRepo, type DefsSnapshot } from './defs.js'
export { type EventInput, EventsRepo, type Replay, type SessionEvent, SessionEventSchema } from './events.js'
export { IdempotencyRepo } from './idempotency.js'
export { type JsonValue, JsonValueSchema } from './json.js'
export { jsonBytes, SESSION_PAGE_BYTES } from './json-bytes.js'
export { ExtensionKvRepo, KV_MAX_VALUE_BYTES, type KvEntry } from './kv.js'
export {
  type AcquireResult,
  type Lease,
  LeasesRepo,
  type NodeRecord,
  type NodeRef,
  NodeSchema,
} from './leases.js'
export { codeSpan, fence, inlineText, type MarkdownOptions, quotedText, renderMarkdown } from './markdown.js'
export { latestVersion, MIGRATIONS, type Migration, migrate, schemaVersion } from './migrations.js'
export { databaseUrlOf } from './postgres/open.js'
export { type CreateSessionInput, type Session, SessionSchema, SessionsRepo } from './sessions.js'
export { type Db, type Dialect, dialectOf } from './statements.js'
export {
  DEFAULT_EVENT_RETENTION,
  DEFAULT_INLINE_FLOOR_BYTES,
  openStore,
  Store,
  type StoreOptions,
} from './store.js'
export {
  exportTranscript,
  exportTranscriptPage,
  iso,
  isoOrNull,
  type Transcript,
  type TranscriptBlock,
  type TranscriptPage,
  TranscriptSchema,
  type TranscriptTurn,
} from './transcript.js'
export { type Iteration, type Turn, TurnSchema, type TurnStatus, TurnsRepo } from './turns.js'
