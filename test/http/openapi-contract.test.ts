// The OpenAPI document is a contract: redocly's recommended rules pass, and a client generated
// from the live document (openapi-typescript + openapi-fetch) type-checks and runs a whole
// scenario against the real server. Nothing here is hand-written to match the document.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import openapiTS, { astToString } from 'openapi-typescript'
import { SessionEventSchema } from '../../src/http/event-schemas.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, tempHome, testServer } from './helpers.js'

const { home } = tempHome('http-openapi')
const TOKEN = 'openapi-contract-token-0123456789'
const repo = join(import.meta.dirname, '..', '..')
const clientDir = join(import.meta.dirname, 'openapi-client')

// What the scenario reports (its own file is checked against the generated client).
type ScenarioResult = {
  sessionId: string
  printed: string
  asyncFirstStatus: number
  asyncLocation: string | null
  polledResult: unknown
  polls: number
  retrySameId: boolean
  retryReplayedHeader: string | null
  reusedKeyStatus: number
  reusedKeyCode: string | undefined
  interrupt: { landed: boolean }
  interruptedCode: string | undefined
  closedState: string
  eventTypes: string[]
  afterCloseStatus: number
  typedErrors: { status: number; code: string | undefined }[]
}

describe('the OpenAPI contract', () => {
  let server: VisServer
  let doc: any
  before(async () => {
    let call: ReturnType<typeof client>
    ;({ server, call } = await testServer({ home, pool: { size: 1 }, token: TOKEN, interruptAckMs: 2000 }))
    const r = await call('GET', '/v1/openapi.json')
    assert.equal(r.status, 200)
    doc = r.body
  })
  after(async () => {
    await server.close()
  })

  test('redocly lint (recommended) finds nothing, with or without a token configured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vis-openapi-lint-'))
    const open = await startServer({
      home: tempHome('http-openapi-open').home,
      python,
      port: 0,
      pool: { size: 0 },
    })
    const openDoc = (await client(open.url)('GET', '/v1/openapi.json')).body
    await open.close()
    for (const [name, d] of [
      ['secured', doc],
      ['open', openDoc],
    ] as const) {
      const file = join(dir, `${name}.json`)
      writeFileSync(file, JSON.stringify(d, null, 2))
      const r = spawnSync(
        join(repo, 'node_modules', '.bin', 'redocly'),
        ['lint', file, '--extends', 'recommended', '--format', 'stylish'],
        {
          encoding: 'utf8',
          timeout: 120_000,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      )
      const out = `${r.stdout}\n${r.stderr}`
      assert.equal(r.status, 0, out)
      assert.match(out, /Your API description is valid/, out)
      assert.doesNotMatch(out, /You have \d+ warning|\d+:\d+\s+(warning|error)/, out)
    }
  })

  test('the document names its schemas, its security, its 4xx answers and its event frames', () => {
    const schemas = doc.components.schemas
    for (const name of [
      'Session',
      'SessionDetail',
      'Block',
      'Attachment',
      'Error',
      'Event',
      'GapFrame',
      'Health',
    ]) {
      assert.ok(schemas[name], `components.schemas.${name}`)
    }
    assert.deepEqual(doc.security, [{ bearer: [] }, { token: [] }])
    assert.equal(doc.components.securitySchemes.bearer.scheme, 'bearer')
    assert.equal(JSON.stringify(doc).includes('"anyOf":[{},{"type":"null"}]'), false)
    const run = doc.paths['/v1/sessions/{id}/blocks'].post
    assert.equal(run.requestBody.required, true)
    assert.equal(
      doc.paths['/v1/sessions'].post.requestBody.required,
      false,
      'an empty body is a session with defaults',
    )
    for (const status of ['400', '401', '403', '404', '409', '413', '415', '421', '422']) {
      assert.ok(run.responses[status], `runBlock lists ${status}`)
    }
    assert.deepEqual(Object.keys(doc.paths['/v1/health'].get.responses).includes('401'), false)
    const events = doc.paths['/v1/sessions/{id}/events'].get
    assert.ok(events.responses['204'])
    assert.match(events.description, /event: gap/)
    const kinds = schemas.Event.anyOf.map((r: { $ref: string }) => r.$ref.split('/').at(-1))
    for (const k of [
      'BlockStartedEvent',
      'OutputEvent',
      'BlockFinishedEvent',
      'InterruptEvent',
      'SessionClosedEvent',
    ]) {
      assert.ok(kinds.includes(k), k)
    }
    assert.deepEqual(schemas.Block.properties.status.enum, ['queued', 'running', 'done'])
  })

  test('a typed client generated from the live document compiles and runs the whole scenario', async () => {
    const ast = await openapiTS(doc)
    mkdirSync(join(clientDir, 'generated'), { recursive: true })
    writeFileSync(join(clientDir, 'generated', 'vis-api.ts'), astToString(ast))
    const tsc = spawnSync(
      process.execPath,
      [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', clientDir],
      {
        encoding: 'utf8',
        timeout: 180_000,
      },
    )
    assert.equal(
      tsc.status,
      0,
      `the scenario does not type-check against the document:\n${tsc.stdout}${tsc.stderr}`,
    )

    // A computed specifier: the scenario is type-checked above against the generated client,
    // which a fresh clone does not have when the test project is type-checked before the tests.
    const scenarioModule = './openapi-client/scenario.js'
    const { scenario } = (await import(scenarioModule)) as {
      scenario: (url: string, token: string) => Promise<ScenarioResult>
    }
    const r = await scenario(server.url, TOKEN)
    assert.equal(r.printed, 'x is 20\n')
    assert.equal(r.asyncFirstStatus, 202)
    assert.match(r.asyncLocation ?? '', /^\/v1\/sessions\/ses_\w+\/blocks\/blk_\w+$/)
    assert.equal(r.polledResult, 42)
    assert.ok(r.polls >= 1)
    assert.equal(r.retrySameId, true)
    assert.equal(r.retryReplayedHeader, 'true')
    assert.equal(r.reusedKeyStatus, 422)
    assert.equal(r.reusedKeyCode, 'idempotency.key-reused')
    assert.equal(r.interrupt.landed, true)
    assert.match(r.interruptedCode ?? '', /interrupt/)
    assert.equal(r.closedState, 'closed')
    for (const t of ['block.started', 'output', 'block.finished', 'interrupt', 'session.closed'] as const) {
      assert.ok(r.eventTypes.includes(t), `${t} in ${r.eventTypes}`)
    }
    assert.equal(r.eventTypes.at(-1), 'session.closed')
    assert.equal(r.afterCloseStatus, 204)
    assert.deepEqual(r.typedErrors, [
      { status: 404, code: 'session.not-found' },
      { status: 400, code: 'http.invalid-body' },
      { status: 404, code: 'block.not-found' },
      { status: 409, code: 'session.closed' },
    ])
    // What the stream carried matches the documented event schemas, field by field.
    const replay = server.engine.replayEvents(r.sessionId, 0, 1000).events
    for (const ev of replay) {
      const parsed = SessionEventSchema.safeParse(ev)
      assert.ok(parsed.success, `${ev.type}: ${JSON.stringify(parsed.error?.issues)}`)
    }
  })
})
