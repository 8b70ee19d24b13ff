// PostgreSQL's schema: the same versions and names as the SQLite MIGRATIONS (../migrations.ts),
// each written by hand for PostgreSQL: BIGINT for ms times and counters, BYTEA for blobs, no
// STRICT / WITHOUT ROWID, and a json_valid(text) function so the CHECKs read as on SQLite.
// Append only, like the SQLite list: a released step is never edited.
import { VisError } from '../../util/errors.js'
import type { Migration } from '../migrations.js'
import type { Db } from '../statements.js'

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'session, turn, iteration, block, attachment, defs',
    sql: `
      -- SQLite's json_valid(), so the CHECKs below say the same as the SQLite schema's.
      CREATE OR REPLACE FUNCTION json_valid(t text) RETURNS boolean
        LANGUAGE plpgsql IMMUTABLE STRICT AS $$
      BEGIN
        PERFORM t::json;
        RETURN true;
      EXCEPTION WHEN others THEN
        RETURN false;
      END $$;

      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT,
        policy TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(policy)),
        created_at BIGINT NOT NULL,
        closed_at BIGINT
      );

      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        request TEXT CHECK (request IS NULL OR json_valid(request)),
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done', 'failed', 'cancelled')),
        created_at BIGINT NOT NULL,
        finished_at BIGINT,
        UNIQUE (session_id, position),
        CHECK ((status = 'open') = (finished_at IS NULL))
      );

      CREATE TABLE iterations (
        id TEXT PRIMARY KEY,
        turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (turn_id, position)
      );

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
        duration_ms BIGINT CHECK (duration_ms IS NULL OR duration_ms >= 0),
        timed_out INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
        status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done')),
        created_at BIGINT NOT NULL,
        finished_at BIGINT,
        UNIQUE (session_id, position),
        CHECK (iteration_id IS NULL OR turn_id IS NOT NULL),
        CHECK ((status = 'running') = (finished_at IS NULL)),
        CHECK (status = 'done' OR (duration_ms IS NULL AND result IS NULL AND error IS NULL))
      );
      CREATE INDEX blocks_by_turn ON blocks(turn_id);
      CREATE INDEX blocks_by_iteration ON blocks(iteration_id);
      CREATE INDEX blocks_running ON blocks(status) WHERE status = 'running';

      CREATE TABLE attachments (
        id TEXT PRIMARY KEY,
        block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        media_type TEXT NOT NULL,
        name TEXT,
        size BIGINT NOT NULL CHECK (size >= 0),
        sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
        data BYTEA,
        storage_uri TEXT,
        created_at BIGINT NOT NULL,
        UNIQUE (block_id, position),
        CHECK ((data IS NULL) <> (storage_uri IS NULL)),
        CHECK (data IS NULL OR octet_length(data) = size)
      );
      CREATE INDEX attachments_by_uri ON attachments(storage_uri) WHERE storage_uri IS NOT NULL;

      CREATE TABLE session_defs (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        snapshot TEXT NOT NULL CHECK (json_valid(snapshot)),
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'events, idempotency keys, extension key-value store',
    sql: `
      ALTER TABLE sessions ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;

      CREATE TABLE session_events (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL CHECK (seq > 0),
        type TEXT NOT NULL,
        data TEXT NOT NULL CHECK (json_valid(data)),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE idempotency_keys (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
        created_at BIGINT NOT NULL,
        UNIQUE (session_id, key)
      );
      CREATE INDEX idempotency_by_block ON idempotency_keys(block_id);

      CREATE TABLE extension_kv (
        extension TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL CHECK (json_valid(value)),
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (extension, key)
      );
    `,
  },
  {
    version: 3,
    name: 'what survived an interrupted or killed block',
    sql: `ALTER TABLE blocks ADD COLUMN survived TEXT CHECK (survived IS NULL OR json_valid(survived));`,
  },
  {
    version: 4,
    name: 'agent turns: model replies and usage, tool-call journal, approvals',
    sql: `
      ALTER TABLE turns ADD COLUMN model TEXT;
      ALTER TABLE turns ADD COLUMN answer TEXT;
      ALTER TABLE turns ADD COLUMN error TEXT CHECK (error IS NULL OR json_valid(error));
      ALTER TABLE turns ADD COLUMN usage TEXT CHECK (usage IS NULL OR json_valid(usage));

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
        created_at BIGINT NOT NULL,
        decided_at BIGINT,
        CHECK ((status = 'pending') = (decided_at IS NULL))
      );
      CREATE INDEX approvals_pending ON approvals(session_id) WHERE status = 'pending';

      CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT REFERENCES turns(id) ON DELETE CASCADE,
        block_id TEXT REFERENCES blocks(id) ON DELETE SET NULL,
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL CHECK (length(args_sha256) = 64),
        args_bytes BIGINT NOT NULL,
        ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
        error TEXT,
        duration_ms DOUBLE PRECISION NOT NULL,
        result_bytes BIGINT,
        approval_id TEXT REFERENCES approvals(id) ON DELETE SET NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX tool_calls_by_turn ON tool_calls(turn_id);
    `,
  },
  {
    version: 5,
    name: 'drafts',
    sql: `
      CREATE TABLE drafts (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        label TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('copy', 'blank')),
        root TEXT NOT NULL,
        dir TEXT NOT NULL,
        base_at DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'applied', 'abandoned')),
        reason TEXT,
        ended_at BIGINT,
        created_at BIGINT NOT NULL
      );
      CREATE UNIQUE INDEX drafts_one_active ON drafts(session_id) WHERE status = 'active';
    `,
  },
  {
    version: 6,
    name: 'partial indexes for the optional parents of a block',
    sql: `
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
      CREATE TABLE session_leases (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        node_url TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        acquired_at BIGINT NOT NULL
      );
      CREATE INDEX session_leases_by_node ON session_leases(node_id);

      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        heartbeat_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'reasoning items of an iteration',
    sql: `
      ALTER TABLE iterations ADD COLUMN reasoning TEXT CHECK (reasoning IS NULL OR json_valid(reasoning));
    `,
  },
]

// Any constant shared by every vis node: the key of the advisory lock that serialises migrations.
const MIGRATION_LOCK = 0x7669_7331 // "vis1"

export function pgSchemaVersion(db: Db): number {
  const exists = db.prepare("SELECT to_regclass('schema_version') IS NOT NULL").pluck().get() as boolean
  if (!exists) return 0
  return (db.prepare('SELECT version FROM schema_version').pluck().get() as number | undefined) ?? 0
}

function refuseNewer(db: Db, version: number, known: number): void {
  if (version > known) {
    throw new VisError(
      'db.schema-newer',
      `The database ${db.name} has schema version ${version}, but this vis-runtime knows only up to ${known}. ` +
        'Upgrade vis-runtime (every node of a cluster), or point VIS_DATABASE_URL at another database.',
      { url: db.name, version, known },
    )
  }
}

// Brings the schema up to the newest known version. All pending steps run in one transaction
// under a transaction-scoped advisory lock, so several nodes starting together migrate once:
// the others wait for the lock, then find the work done. A failure leaves the previous version.
export function migratePostgres(db: Db, migrations: readonly Migration[] = PG_MIGRATIONS): number {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0)
  return db.transaction(() => {
    db.prepare('SELECT pg_advisory_xact_lock(?)').run(MIGRATION_LOCK)
    db.exec(`CREATE TABLE IF NOT EXISTS schema_version (
               one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
               version INTEGER NOT NULL)`)
    db.exec('INSERT INTO schema_version (version) VALUES (0) ON CONFLICT DO NOTHING')
    const current = pgSchemaVersion(db)
    refuseNewer(db, current, known)
    const pending = migrations.filter((m) => m.version > current).sort((a, b) => a.version - b.version)
    for (const m of pending) {
      try {
        db.exec(m.sql)
      } catch (err) {
        throw new VisError(
          'db.migration-failed',
          `Migration ${m.version} (${m.name}) failed on ${db.name}: ${(err as Error).message}. The database was left at version ${current}.`,
          { url: db.name, version: m.version },
          { cause: err },
        )
      }
      db.prepare('UPDATE schema_version SET version = ?').run(m.version)
    }
    return pgSchemaVersion(db)
  })()
}
