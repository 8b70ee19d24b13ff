// The hand checks on the block hot path (src/persistence/fast-shapes.ts) answer exactly what
// their zod schemas answer for the common shapes, and leave everything else to the schema,
// whose precise error the caller still gets. Rows come from a real store on both backends.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ZodError } from 'zod'
import {
  BlockErrorSchema,
  BlockSchema,
  FinishBlockInputSchema,
  parseBlockRow,
  StartBlockInputSchema,
} from '../../src/persistence/blocks.js'
import {
  commonBlockError,
  commonFinishBlockInput,
  commonStartBlockInput,
  isBlockRow,
  isSessionRow,
} from '../../src/persistence/fast-shapes.js'
import { Store } from '../../src/persistence/index.js'
import { isJsonValue, JsonValueSchema } from '../../src/persistence/json.js'
import { parseSessionRow, SessionSchema } from '../../src/persistence/sessions.js'
import { isVisError } from '../../src/util/errors.js'
import { BACKENDS, openTempStore, tempPlace } from './helpers.js'

// Same value, same key order (the order reaches JSON responses).
function same(hand: unknown, schema: unknown, what: string) {
  assert.deepStrictEqual(hand, schema, what)
  assert.equal(JSON.stringify(hand), JSON.stringify(schema), `${what}: key order`)
}

// The schema's error for a value the hand check refuses (both must refuse it).
function zodIssue(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof ZodError, `a ZodError, not ${String(err)}`)
    return err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
  }
  assert.fail('the schema accepted it')
}

function rawRows(store: Store, table: 'blocks' | 'sessions'): Record<string, unknown>[] {
  return store.db.prepare(`SELECT * FROM ${table} ORDER BY created_at, id`).all() as Record<string, unknown>[]
}

for (const backend of BACKENDS) {
  describe(`rows read back (${backend})`, () => {
    test('a well-formed block or session row parses by hand to what the schema gives', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({ title: 't', policy: { network: { mode: 'none' } } })
      store.sessions.create({})
      store.blocks.start({ sessionId: s.id, code: 'x = 1' })
      store.blocks.startFinished(
        { sessionId: s.id, code: 'print(1)' },
        { stdout: '1\n', durationMs: 3, result: { a: [1, 'b', null, true] } },
      )
      store.blocks.startFinished(
        { sessionId: s.id, code: 'raise X', turnId: null },
        {
          durationMs: 5,
          timedOut: true,
          // Not the schema's order: the read-back keeps zod's (code, message, traceback, rest).
          // Extra keys are kept (catchall), though the input type does not spell them out.
          error: { message: 'boom', extra: { k: [1] }, traceback: 'tb', code: 'py.X' } as { message: string },
          survived: { kept: ['x'] },
        },
      )
      const blocks = rawRows(store, 'blocks')
      assert.equal(blocks.length, 3)
      for (const row of blocks) {
        assert.equal(isBlockRow(row), true, JSON.stringify(row))
        same(parseBlockRow(row), BlockSchema.parse(row), `block ${row.code}`)
      }
      assert.deepEqual(Object.keys(store.blocks.listBySession(s.id)[2]!.error!), [
        'code',
        'message',
        'traceback',
        'extra',
      ])
      const sessions = rawRows(store, 'sessions')
      assert.equal(sessions.length, 2)
      for (const row of sessions) {
        assert.equal(isSessionRow(row), true)
        same(parseSessionRow(row), SessionSchema.parse(row), `session ${row.id}`)
      }
    })

    test("a session's closed_at, read fresh: open, closed by another connection, missing", () => {
      const place = tempPlace(backend)
      const a = new Store(place)
      const b = new Store(place) // another process's connection (the CLI beside `vis serve`)
      try {
        const s = a.sessions.create({})
        assert.equal(a.sessions.closedAt(s.id), null)
        const closed = b.sessions.close(s.id)
        assert.equal(typeof closed.closedAt, 'number')
        assert.equal(a.sessions.closedAt(s.id), closed.closedAt, 'no stale answer')
        assert.equal(a.sessions.closedAt('ses_missing'), undefined)
      } finally {
        b.close()
        a.close()
      }
    })

    test('a malformed row is left to the schema, which throws its precise error', () => {
      const store = openTempStore({}, backend)
      const s = store.sessions.create({})
      store.blocks.start({ sessionId: s.id, code: 'x = 1' })
      const [block] = rawRows(store, 'blocks')
      const badBlocks: [string, unknown][] = [
        ['position', 1.5],
        ['position', '1'],
        ['code', null],
        ['status', 'queued'],
        ['timed_out', 2],
        ['duration_ms', 'x'],
        ['turn_id', 3],
        ['created_at', null],
        ['survived', 1],
      ]
      for (const [key, value] of badBlocks) {
        const row = { ...block, [key]: value }
        assert.equal(isBlockRow(row), false, `${key}=${String(value)}`)
        assert.equal(
          zodIssue(() => parseBlockRow(row)),
          zodIssue(() => BlockSchema.parse(row)),
        )
        assert.match(
          zodIssue(() => parseBlockRow(row)),
          new RegExp(`^${key}:`),
        )
      }
      const { id: _gone, ...noId } = block!
      assert.equal(isBlockRow(noId), false)
      assert.match(
        zodIssue(() => parseBlockRow(noId)),
        /^id: Required/,
      )
      // A stored error that is not a BlockError: the schema's error, from the fast path too.
      const row = { ...block, status: 'done', error: JSON.stringify({ code: 'x' }) }
      assert.equal(isBlockRow(row), true)
      assert.match(
        zodIssue(() => parseBlockRow(row)),
        /^message: Required/,
      )
      const [session] = rawRows(store, 'sessions')
      for (const [key, value] of [
        ['event_seq', '1'],
        ['policy', null],
        ['closed_at', 1.5],
      ] as const) {
        const bad = { ...session, [key]: value }
        assert.equal(isSessionRow(bad), false, key)
        assert.match(
          zodIssue(() => parseSessionRow(bad)),
          new RegExp(`^${key}:`),
        )
      }
      for (const v of [null, [], 'row', 1]) {
        assert.equal(isBlockRow(v), false)
        assert.equal(isSessionRow(v), false)
      }
    })
  })
}

describe('repository inputs the engine builds', () => {
  test('a block error: the common forms by hand, in the schema order; anything else refused', () => {
    const good = [
      { message: 'm' },
      { code: 'c', message: 'm' },
      { traceback: 't', message: 'm', code: 'c' },
      { message: 'm', line: 3, path: ['a', 0], nested: { x: null, y: false } },
      { message: 'm', code: undefined },
    ].filter((v) => !Object.values(v).includes(undefined))
    for (const v of good) same(commonBlockError(v), BlockErrorSchema.parse(v), JSON.stringify(v))
    const bad = [
      null,
      [],
      'm',
      {},
      { message: 1 },
      { message: 'm', code: 1 },
      { message: 'm', traceback: null },
      { message: 'm', x: Number.NaN },
      { message: 'm', x: undefined },
      { message: 'm', x: { y: () => 1 } },
    ]
    for (const v of bad) {
      assert.equal(commonBlockError(v), undefined, String(JSON.stringify(v)))
      assert.equal(BlockErrorSchema.safeParse(v).success, false, String(JSON.stringify(v)))
    }
    // Valid for the schema, but not the common form: left to it (an explicit undefined key).
    assert.equal(commonBlockError({ message: 'm', code: undefined }), undefined)
    assert.equal(BlockErrorSchema.safeParse({ message: 'm', code: undefined }).success, true)
  })

  test("a block's start: the schema's output by hand, unknown keys dropped; bad input refused", () => {
    const good = [
      { sessionId: 's', code: 'x = 1' },
      { sessionId: 's', code: '', createdAt: 0 },
      {
        id: 'b',
        sessionId: 's',
        code: 'x',
        turnId: null,
        iterationId: 'i',
        idempotencyKey: 'k',
        createdAt: 5,
      },
      { code: 'x', sessionId: 's', turnId: 't', stray: 1 },
      { sessionId: 's', code: 'x', id: undefined },
    ]
    for (const v of good) same(commonStartBlockInput(v), StartBlockInputSchema.parse(v), JSON.stringify(v))
    const bad = [
      null,
      {},
      { sessionId: '', code: 'x' },
      { sessionId: 's' },
      { sessionId: 's', code: 1 },
      { sessionId: 's', code: 'x', id: '' },
      { sessionId: 's', code: 'x', id: 'a'.repeat(201) },
      { sessionId: 's', code: 'x', turnId: '' },
      { sessionId: 's', code: 'x', iterationId: 1 },
      { sessionId: 's', code: 'x', idempotencyKey: '' },
      { sessionId: 's', code: 'x', idempotencyKey: 'k'.repeat(256) },
      { sessionId: 's', code: 'x', createdAt: -1 },
      { sessionId: 's', code: 'x', createdAt: 1.5 },
    ]
    for (const v of bad) {
      assert.equal(commonStartBlockInput(v), undefined, JSON.stringify(v))
      assert.equal(StartBlockInputSchema.safeParse(v).success, false, JSON.stringify(v))
    }
  })

  test("a block's finish: defaults filled as the schema fills them; bad input refused", () => {
    const good = [
      { durationMs: 0 },
      { durationMs: 7, stdout: 'o', stderr: 'e', result: [1, { a: 'b' }], timedOut: true, survived: null },
      { durationMs: 1, result: null, error: { message: 'm', code: 'c', extra: [1] }, survived: { s: 1 } },
      { durationMs: 1, stray: 'dropped' },
    ]
    for (const v of good) same(commonFinishBlockInput(v), FinishBlockInputSchema.parse(v), JSON.stringify(v))
    const bad = [
      null,
      {},
      { durationMs: -1 },
      { durationMs: 1.5 },
      { durationMs: 1, stdout: 1 },
      { durationMs: 1, timedOut: 1 },
      { durationMs: 1, result: Number.POSITIVE_INFINITY },
      { durationMs: 1, result: { a: undefined } },
      { durationMs: 1, error: { code: 'c' } },
      { durationMs: 1, survived: [Number.NaN] },
    ]
    for (const v of bad) {
      assert.equal(commonFinishBlockInput(v), undefined, JSON.stringify(v))
      assert.equal(FinishBlockInputSchema.safeParse(v).success, false, JSON.stringify(v))
    }
  })

  test('the repository still answers a bad input with the schema path in db.invalid-input', () => {
    const store = openTempStore()
    const s = store.sessions.create({})
    const refused = (fn: () => unknown, path: string) =>
      assert.throws(fn, (err: unknown) => {
        assert.ok(isVisError(err) && err.code === 'db.invalid-input', String(err))
        assert.match(err.message, new RegExp(`: ${path}: `))
        return true
      })
    refused(() => store.blocks.start({ sessionId: s.id, code: 'x', createdAt: -1 }), 'createdAt')
    refused(
      () => store.blocks.startFinished({ sessionId: s.id, code: 'x' }, { durationMs: -1 }),
      'durationMs',
    )
    const running = store.blocks.start({ sessionId: s.id, code: 'x' }).block
    refused(
      () => store.blocks.finish(running.id, { durationMs: 1, error: { code: 'c' } as never }),
      'error.message',
    )
    assert.equal(store.blocks.require(running.id).status, 'running', 'nothing written')
  })
})

describe('one transaction runner for every caller', () => {
  test('a nested failure undoes only its savepoint; an outer one undoes everything', () => {
    const store = openTempStore()
    const s = store.sessions.create({})
    store.transaction(() => {
      store.blocks.start({ sessionId: s.id, code: 'kept' })
      assert.throws(() =>
        store.transaction(() => {
          store.blocks.start({ sessionId: s.id, code: 'undone' })
          throw new Error('inner')
        }),
      )
    })
    assert.throws(
      () =>
        store.transaction(() => {
          store.blocks.start({ sessionId: s.id, code: 'outer' })
          throw new Error('outer')
        }),
      /outer/,
    )
    assert.deepEqual(
      store.blocks.listBySession(s.id).map((b) => b.code),
      ['kept'],
    )
    assert.equal(store.db.inTransaction, false)
  })
})

describe('the plain JSON walk', () => {
  test('accepts exactly what JsonValueSchema accepts, for the values blocks carry and the ones they must not', () => {
    const values: unknown[] = [
      null,
      0,
      -1.5,
      'x',
      true,
      [],
      {},
      [1, 'a', null, [false], { k: { deep: [1.25] } }],
      Object.create(null),
      Number.NaN,
      Number.POSITIVE_INFINITY,
      undefined,
      [undefined],
      { a: undefined },
      { a: () => 1 },
      new Date(0),
      new Map(),
      Symbol('s'),
      10n,
    ]
    for (const [i, v] of values.entries()) {
      assert.equal(isJsonValue(v), JsonValueSchema.safeParse(v).success, `values[${i}]`)
    }
  })
})
