import { VisError } from '../util/errors.js'
import type { SqliteDb as Db } from './statements.js'

export type Migration = {
  readonly version: number
  readonly name: string
  readonly sql: string
}

// Append only: a released migration is never edited, the next change is a new version.
// Tables are STRICT so a wrong type is refused by SQLite itself, not just by our zod schemas.
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'session, turn, iteration, block, attachment, defs',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT,
        policy TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(policy)),
        created_at INTEGER NOT NULL,
        closed_at INTEGER
      ) STRICT;

      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        request TEXT CHECK (request IS NULL OR json_valid(request)),
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'failed', 'cancelled')),
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (session_id, position),
        CHECK ((status = 'open') = (finished_at IS NULL))
      ) STRICT;

      CREATE TABLE iterations (
        id TEXT PRIMARY KEY,
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (turn_id, position)
      ) STRICT;

      CREATE TABLE blocks (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT REFERENCES turns(id) ON DELETE CASCADE,
        iteration_id TEXT REFERENCES iterations(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        code TEXT NOT NULL,
        stdout TEXT NOT NULL DEFAULT '',
        stderr TEXT NOT NULL DEFAULT '',
        result TEXT CHECK (result IS NULL OR json_valid(result)),
        error TEXT CHECK (error IS NULL OR json_valid(error)),
        duration_ms INTEGER CHECK (duration_ms IS NULL OR duration_ms >= 0),
        timed_out INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
        status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done')),
        created_at INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (session_id, position),
        CHECK (iteration_id IS NULL OR turn_id IS NOT NULL),
        CHECK ((status = 'running') = (finished_at IS NULL)),
        CHECK (status = 'done' OR (duration_ms IS NULL AND result IS NULL AND error IS NULL))
      ) STRICT;
      CREATE INDEX blocks_by_turn ON blocks(turn_id);
      CREATE INDEX blocks_by_iteration ON blocks(iteration_id);
      CREATE INDEX blocks_running ON blocks(status) WHERE status = 'running';

      CREATE TABLE attachments (
        id TEXT PRIMARY KEY,
        block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        media_type TEXT NOT NULL,
        name TEXT,
        size INTEGER NOT NULL CHECK (size >= 0),
        sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
        data BLOB,
        storage_uri TEXT,
        created_at INTEGER NOT NULL,
        UNIQUE (block_id, position),
        CHECK ((data IS NULL) <> (storage_uri IS NULL)),
        CHECK (data IS NULL OR length(data) = size)
      ) STRICT;
      CREATE INDEX attachments_by_uri ON attachments(storage_uri) WHERE storage_uri IS NOT NULL;

      CREATE TABLE session_defs (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        snapshot TEXT NOT NULL CHECK (json_valid(snapshot)),
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'events, idempotency keys, extension key-value store',
    sql: `
      -- The per-session counter lives on the session so pruning old events never lets a seq be reused.
      ALTER TABLE sessions ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE session_events (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL CHECK (seq > 0),
        type TEXT NOT NULL,
        data TEXT NOT NULL CHECK (json_valid(data)),
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE idempotency_keys (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        UNIQUE (session_id, key)
      ) STRICT;
      CREATE INDEX idempotency_by_block ON idempotency_keys(block_id);

      CREATE TABLE extension_kv (
        extension TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL CHECK (json_valid(value)),
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (extension, key)
      ) STRICT;
    `,
  },
  {
    version: 3,
    name: 'what survived an interrupted or killed block',
    sql: `
      -- Issue 13: the survived report of a block that was interrupted, timed out or had its
      -- worker replaced (intact / restored / lost names, cancelled tool calls); NULL otherwise.
      ALTER TABLE blocks ADD COLUMN survived TEXT CHECK (survived IS NULL OR json_valid(survived));
    `,
  },
  {
    version: 4,
    name: 'agent turns: model replies and usage, tool-call journal, approvals',
    sql: `
      -- A turn's outcome as the agent loop (src/agent) ends it; usage is JSON token counts and cost.
      ALTER TABLE turns ADD COLUMN model TEXT;
      ALTER TABLE turns ADD COLUMN answer TEXT;
      ALTER TABLE turns ADD COLUMN error TEXT CHECK (error IS NULL OR json_valid(error));
      ALTER TABLE turns ADD COLUMN usage TEXT CHECK (usage IS NULL OR json_valid(usage));

      -- One model request per iteration: what it answered (text, tool calls) and what it cost.
      ALTER TABLE iterations ADD COLUMN model TEXT;
      ALTER TABLE iterations ADD COLUMN request_id TEXT;
      ALTER TABLE iterations ADD COLUMN text TEXT;
      ALTER TABLE iterations ADD COLUMN tool_calls TEXT CHECK (tool_calls IS NULL OR json_valid(tool_calls));
      ALTER TABLE iterations ADD COLUMN usage TEXT CHECK (usage IS NULL OR json_valid(usage));
      ALTER TABLE iterations ADD COLUMN stop TEXT;

      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT REFERENCES turns(id) ON DELETE CASCADE,
        block_id TEXT REFERENCES blocks(id) ON DELETE SET NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL CHECK (json_valid(args)),
        reason TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'approved', 'denied', 'cancelled')),
        decided_by TEXT,
        note TEXT,
        created_at INTEGER NOT NULL,
        decided_at INTEGER,
        CHECK ((status = 'pending') = (decided_at IS NULL))
      ) STRICT;
      CREATE INDEX approvals_pending ON approvals(session_id) WHERE status = 'pending';

      CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT REFERENCES turns(id) ON DELETE CASCADE,
        block_id TEXT REFERENCES blocks(id) ON DELETE SET NULL,
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL CHECK (length(args_sha256) = 64),
        args_bytes INTEGER NOT NULL,
        ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
        error TEXT,
        duration_ms REAL NOT NULL,
        result_bytes INTEGER,
        approval_id TEXT REFERENCES approvals(id) ON DELETE SET NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX tool_calls_by_turn ON tool_calls(turn_id);
    `,
  },
  {
    version: 5,
    name: 'drafts',
    sql: `
      -- A session's drafts (src/drafts): at most one active per session; ended ones stay as history.
      CREATE TABLE drafts (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('copy', 'blank')),
        root TEXT NOT NULL,
        dir TEXT NOT NULL,
        base_at REAL NOT NULL, -- ms, with the ctime clock's sub-ms precision
        status TEXT NOT NULL CHECK (status IN ('active', 'applied', 'abandoned')),
        reason TEXT,
        ended_at INTEGER,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX drafts_one_active ON drafts(session_id) WHERE status = 'active';
    `,
  },
  {
    version: 6,
    name: 'partial indexes for the optional parents of a block',
    sql: `
      -- Issue 15 §5: most blocks have no turn or iteration, yet each insert wrote a NULL entry
      -- into both indexes: two of the ~13 WAL pages a block's fsync carries. Lookups by a parent
      -- (turn_id = ?, and the foreign-key cascades) imply NOT NULL, so partial indexes serve them.
      DROP INDEX blocks_by_turn;
      DROP INDEX blocks_by_iteration;
      CREATE INDEX blocks_by_turn ON blocks(turn_id) WHERE turn_id IS NOT NULL;
      CREATE INDEX blocks_by_iteration ON blocks(iteration_id) WHERE iteration_id IS NOT NULL;
    `,
  },
  {
    version: 7,
    name: 'cluster: session leases and nodes',
    sql: `
      -- Issue 19: which node owns a live session (renewed by its owner, taken over once expired;
      -- src/persistence/leases.ts), and the nodes with their last heartbeat. Same on PostgreSQL.
      CREATE TABLE session_leases (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        node_url TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX session_leases_by_node ON session_leases(node_id);

      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 8,
    name: 'reasoning items of an iteration',
    sql: `
      -- Issue 17 gap: the reasoning items an OpenAI Responses reply returned (JSON array, each as
      -- sent, encrypted_content included), which the turn sends back in its later requests.
      ALTER TABLE iterations ADD COLUMN reasoning TEXT CHECK (reasoning IS NULL OR json_valid(reasoning));
    `,
  },
]

export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0)
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number
}

function refuseNewer(db: Db, version: number, known: number): void {
  if (version > known) {
    throw new VisError(
      'db.schema-newer',
      `The database ${db.name} has schema version ${version}, but this vis-runtime knows only up to ${known}. ` +
        'Upgrade vis-runtime, or point VIS_HOME at another directory.',
      { path: db.name, version, known },
    )
  }
}

// Brings the schema up to `target` (default: the newest known). All pending steps run in one
// IMMEDIATE transaction, so a failure leaves the previous version whole and two processes
// opening the same file at once cannot both migrate.
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS, target?: number): number {
  const known = latestVersion(migrations)
  const goal = target ?? known
  refuseNewer(db, schemaVersion(db), known)
  const run = db.transaction(() => {
    const current = schemaVersion(db)
    refuseNewer(db, current, known)
    const pending = migrations
      .filter((m) => m.version > current && m.version <= goal)
      .sort((a, b) => a.version - b.version)
    for (const m of pending) {
      try {
        db.exec(m.sql)
      } catch (err) {
        throw new VisError(
          'db.migration-failed',
          `Migration ${m.version} (${m.name}) failed on ${db.name}: ${(err as Error).message}. The database was left at version ${current}.`,
          { path: db.name, version: m.version },
          { cause: err },
        )
      }
      db.pragma(`user_version = ${m.version}`)
    }
    return schemaVersion(db)
  })
  return run.immediate()
}
