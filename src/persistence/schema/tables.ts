// The persistence schema, written once. Both dialects' migrations (../migrations.ts for SQLite,
// ../postgres/migrations.ts for PostgreSQL) are compiled from this list by ddl.ts, and
// test/persistence/schema.test.ts checks that both databases end with what it declares.
//
// Append only: a released version is never edited, the next change is a new version.
import {
  addColumn,
  byteLength,
  type Column,
  type ColumnType,
  createIndex,
  createTable,
  dropIndex,
  type SchemaVersion,
} from './define.js'

type More = Omit<Column, 'name' | 'type'>
const col =
  (type: ColumnType) =>
  (name: string, more: More = {}): Column => ({ name, type, ...more })
const text = col('text')
const integer = col('integer')
const bigint = col('bigint')
const real = col('real')
const blob = col('blob')
const json = col('json')

const id = (): Column => text('id', { primaryKey: true })
// A ms timestamp.
const at = (name: string, more: More = {}): Column => bigint(name, more)
const parent = (
  name: string,
  table: string,
  more: More & { onDelete?: 'cascade' | 'set null' } = {},
): Column => {
  const { onDelete = 'cascade', ...rest } = more
  return text(name, { ...rest, references: { table, column: 'id', onDelete } })
}
const required = { notNull: true } as const

// What an approval and a tool-call journal entry both start with: whose turn and block asked for
// which tool. The block may go (its record stays, unlinked); the session and turn take theirs along.
const toolRecordHead = (): Column[] => [
  id(),
  parent('session_id', 'sessions', required),
  parent('turn_id', 'turns'),
  parent('block_id', 'blocks', { onDelete: 'set null' }),
  text('tool', required),
]

export const SCHEMA: readonly SchemaVersion[] = [
  {
    version: 1,
    name: 'session, turn, iteration, block, attachment, defs',
    steps: [
      createTable({
        name: 'sessions',
        columns: [
          id(),
          text('title'),
          json('policy', { ...required, default: '{}' }),
          at('created_at', required),
          at('closed_at'),
        ],
      }),
      createTable({
        name: 'turns',
        columns: [
          id(),
          parent('session_id', 'sessions', required),
          integer('position', required),
          json('request'),
          text('status', { ...required, default: 'open', oneOf: ['open', 'done', 'failed', 'cancelled'] }),
          at('created_at', required),
          at('finished_at'),
        ],
        unique: [['session_id', 'position']],
        checks: ["(status = 'open') = (finished_at IS NULL)"],
      }),
      createTable({
        name: 'iterations',
        columns: [
          id(),
          parent('turn_id', 'turns', required),
          integer('position', required),
          at('created_at', required),
        ],
        unique: [['turn_id', 'position']],
      }),
      createTable({
        name: 'blocks',
        columns: [
          id(),
          parent('session_id', 'sessions', required),
          parent('turn_id', 'turns'),
          parent('iteration_id', 'iterations'),
          integer('position', required),
          text('code', required),
          text('stdout', { ...required, default: '' }),
          text('stderr', { ...required, default: '' }),
          json('result'),
          json('error'),
          bigint('duration_ms', { check: 'duration_ms IS NULL OR duration_ms >= 0' }),
          integer('timed_out', { ...required, default: 0, oneOf: [0, 1] }),
          text('status', { ...required, default: 'running', oneOf: ['running', 'done'] }),
          at('created_at', required),
          at('finished_at'),
        ],
        unique: [['session_id', 'position']],
        checks: [
          'iteration_id IS NULL OR turn_id IS NOT NULL',
          "(status = 'running') = (finished_at IS NULL)",
          "status = 'done' OR (duration_ms IS NULL AND result IS NULL AND error IS NULL)",
        ],
      }),
      createIndex({ name: 'blocks_by_turn', table: 'blocks', columns: ['turn_id'] }),
      createIndex({ name: 'blocks_by_iteration', table: 'blocks', columns: ['iteration_id'] }),
      createIndex({
        name: 'blocks_running',
        table: 'blocks',
        columns: ['status'],
        where: "status = 'running'",
      }),
      createTable({
        name: 'attachments',
        columns: [
          id(),
          parent('block_id', 'blocks', required),
          integer('position', required),
          text('media_type', required),
          text('name'),
          bigint('size', { ...required, check: 'size >= 0' }),
          text('sha256', { ...required, check: 'length(sha256) = 64' }),
          blob('data'),
          text('storage_uri'),
          at('created_at', required),
        ],
        unique: [['block_id', 'position']],
        checks: [
          '(data IS NULL) <> (storage_uri IS NULL)',
          (dialect) => `data IS NULL OR ${byteLength('data', dialect)} = size`,
        ],
      }),
      createIndex({
        name: 'attachments_by_uri',
        table: 'attachments',
        columns: ['storage_uri'],
        where: 'storage_uri IS NOT NULL',
      }),
      createTable({
        name: 'session_defs',
        columns: [
          parent('session_id', 'sessions', { primaryKey: true }),
          json('snapshot', required),
          at('updated_at', required),
        ],
      }),
    ],
  },
  {
    version: 2,
    name: 'events, idempotency keys, extension key-value store',
    steps: [
      // The per-session counter lives on the session so pruning old events never lets a seq be reused.
      addColumn('sessions', bigint('event_seq', { ...required, default: 0 })),
      createTable({
        name: 'session_events',
        columns: [
          parent('session_id', 'sessions', required),
          bigint('seq', { ...required, check: 'seq > 0' }),
          text('type', required),
          json('data', required),
          at('created_at', required),
        ],
        primaryKey: ['session_id', 'seq'],
        withoutRowid: true,
      }),
      createTable({
        name: 'idempotency_keys',
        columns: [
          parent('session_id', 'sessions', required),
          text('key', required),
          parent('block_id', 'blocks', required),
          at('created_at', required),
        ],
        unique: [['session_id', 'key']],
      }),
      createIndex({ name: 'idempotency_by_block', table: 'idempotency_keys', columns: ['block_id'] }),
      createTable({
        name: 'extension_kv',
        columns: [
          text('extension', required),
          text('key', required),
          json('value', required),
          at('updated_at', required),
        ],
        primaryKey: ['extension', 'key'],
      }),
    ],
  },
  {
    version: 3,
    name: 'what survived an interrupted or killed block',
    steps: [
      // Issue 13: the survived report of a block that was interrupted, timed out or had its
      // worker replaced (intact / restored / lost names, cancelled tool calls); NULL otherwise.
      addColumn('blocks', json('survived')),
    ],
  },
  {
    version: 4,
    name: 'agent turns: model replies and usage, tool-call journal, approvals',
    steps: [
      // A turn's outcome as the agent loop (src/agent) ends it; usage is JSON token counts and cost.
      addColumn('turns', text('model')),
      addColumn('turns', text('answer')),
      addColumn('turns', json('error')),
      addColumn('turns', json('usage')),
      // One model request per iteration: what it answered (text, tool calls) and what it cost.
      addColumn('iterations', text('model')),
      addColumn('iterations', text('request_id')),
      addColumn('iterations', text('text')),
      addColumn('iterations', json('tool_calls')),
      addColumn('iterations', json('usage')),
      addColumn('iterations', text('stop')),
      createTable({
        name: 'approvals',
        columns: [
          ...toolRecordHead(),
          json('args', required),
          text('reason', required),
          text('status', {
            ...required,
            default: 'pending',
            oneOf: ['pending', 'approved', 'denied', 'cancelled'],
          }),
          text('decided_by'),
          text('note'),
          at('created_at', required),
          at('decided_at'),
        ],
        checks: ["(status = 'pending') = (decided_at IS NULL)"],
      }),
      createIndex({
        name: 'approvals_pending',
        table: 'approvals',
        columns: ['session_id'],
        where: "status = 'pending'",
      }),
      createTable({
        name: 'tool_calls',
        columns: [
          ...toolRecordHead(),
          text('args_sha256', { ...required, check: 'length(args_sha256) = 64' }),
          bigint('args_bytes', required),
          integer('ok', { ...required, oneOf: [0, 1] }),
          text('error'),
          real('duration_ms', required),
          bigint('result_bytes'),
          parent('approval_id', 'approvals', { onDelete: 'set null' }),
          at('created_at', required),
        ],
      }),
      createIndex({ name: 'tool_calls_by_turn', table: 'tool_calls', columns: ['turn_id'] }),
    ],
  },
  {
    version: 5,
    name: 'drafts',
    steps: [
      // A session's drafts (src/drafts): at most one active per session; ended ones stay as history.
      createTable({
        name: 'drafts',
        columns: [
          id(),
          parent('session_id', 'sessions', required),
          text('label', required),
          text('kind', { ...required, oneOf: ['copy', 'blank'] }),
          text('root', required),
          text('dir', required),
          // ms, with the ctime clock's sub-ms precision
          real('base_at', required),
          text('status', { ...required, oneOf: ['active', 'applied', 'abandoned'] }),
          text('reason'),
          at('ended_at'),
          at('created_at', required),
        ],
      }),
      createIndex({
        name: 'drafts_one_active',
        table: 'drafts',
        columns: ['session_id'],
        unique: true,
        where: "status = 'active'",
      }),
    ],
  },
  {
    version: 6,
    name: 'partial indexes for the optional parents of a block',
    steps: [
      // Issue 15 §5: most blocks have no turn or iteration, yet each insert wrote a NULL entry
      // into both indexes: two of the ~13 WAL pages a block's fsync carries. Lookups by a parent
      // (turn_id = ?, and the foreign-key cascades) imply NOT NULL, so partial indexes serve them.
      dropIndex('blocks_by_turn'),
      dropIndex('blocks_by_iteration'),
      createIndex({
        name: 'blocks_by_turn',
        table: 'blocks',
        columns: ['turn_id'],
        where: 'turn_id IS NOT NULL',
      }),
      createIndex({
        name: 'blocks_by_iteration',
        table: 'blocks',
        columns: ['iteration_id'],
        where: 'iteration_id IS NOT NULL',
      }),
    ],
  },
  {
    version: 7,
    name: 'cluster: session leases and nodes',
    steps: [
      // Issue 19: which node owns a live session (renewed by its owner, taken over once expired;
      // src/persistence/leases.ts), and the nodes with their last heartbeat.
      createTable({
        name: 'session_leases',
        columns: [
          parent('session_id', 'sessions', { primaryKey: true }),
          text('node_id', required),
          text('node_url', required),
          at('expires_at', required),
          at('acquired_at', required),
        ],
      }),
      createIndex({ name: 'session_leases_by_node', table: 'session_leases', columns: ['node_id'] }),
      createTable({
        name: 'nodes',
        columns: [id(), text('url', required), at('started_at', required), at('heartbeat_at', required)],
      }),
    ],
  },
  {
    version: 8,
    name: 'reasoning items of an iteration',
    steps: [
      // Issue 17 gap: the reasoning items an OpenAI Responses reply returned (JSON array, each as
      // sent, encrypted_content included), which the turn sends back in its later requests.
      addColumn('iterations', json('reasoning')),
    ],
  },
  {
    version: 9,
    name: 'the value of a block that printed and ended in an expression',
    steps: [
      // Issue 31 §5: beside the output, for the renderings a model reads (a notebook shows both);
      // `result` stays NULL for a block that printed.
      addColumn('blocks', json('value')),
    ],
  },
  {
    version: 10,
    name: 'turns by creation time',
    steps: [
      // A turn's view looks for the sub_loop children whose request names it: they start after it,
      // so the scan runs from its start on, not over every turn the database ever held.
      createIndex({ name: 'turns_by_created', table: 'turns', columns: ['created_at'] }),
    ],
  },
  {
    version: 11,
    name: 'the family a sub_loop child session belongs to',
    steps: [
      // A sub_loop child is a session of its own, but what the engine stores of its blocks counts
      // against its top session's attachment bound (src/engine/attachment-budget.ts): the top
      // session's id, NULL for a session that is its own top. Kept on the row so the bound holds
      // after a restart too; the index finds a family's sessions.
      addColumn('sessions', text('family_id')),
      createIndex({ name: 'sessions_by_family', table: 'sessions', columns: ['family_id'] }),
    ],
  },
]
