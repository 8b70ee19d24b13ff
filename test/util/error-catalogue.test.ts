// The error catalogue is the one definition of every code: each entry builds a VisError that the
// HTTP layer answers with the entry's status, OpenAPI's enum and docs/errors.md are its copies,
// and a code it lacks fails loudly where tests run.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { MOUNTED_ROUTES } from '../../src/http/app.js'
import { ErrorEnvelopeSchema, errorReply, statusFor } from '../../src/http/errors.js'
import { openApiDocument } from '../../src/http/openapi.js'
import {
  catalogueEntry,
  ERROR_CATALOGUE,
  ERROR_CODES,
  ERROR_FAMILIES,
  type ErrorCode,
  isErrorCode,
} from '../../src/util/error-catalogue.js'
import { renderErrorsDoc } from '../../src/util/error-doc.js'
import { isVisError, VisError } from '../../src/util/errors.js'

const root = new URL('../../', import.meta.url)

describe('the error catalogue', () => {
  test('every entry builds a VisError that HTTP answers with its status and a valid envelope', () => {
    assert.ok(ERROR_CODES.length > 200, `only ${ERROR_CODES.length} codes`)
    for (const code of ERROR_CODES) {
      const entry = ERROR_CATALOGUE[code]
      const err = new VisError(code, `${code} happened`, { sessionId: 'ses_x', op: 'test' })
      assert.ok(isVisError(err, code))
      assert.deepEqual(err.toJSON(), {
        code,
        message: `${code} happened`,
        context: { sessionId: 'ses_x', op: 'test' },
      })
      const { status, body } = errorReply(err)
      assert.equal(status, entry.status, code)
      assert.equal(statusFor(code), entry.status, code)
      assert.deepEqual(ErrorEnvelopeSchema.parse(body), body, code)
      assert.equal(body.error.code, code)
      assert.ok(status >= 400 && status <= 599, `${code}: ${status} is no error status`)
      assert.match(code, /^[a-z0-9]+(\.[a-z0-9]+(-[a-z0-9]+)*)+$/, 'dotted, lower-case, kebab words')
      assert.match(entry.summary, /^[A-Z`'"a-z].*\.$/, `${code}: a sentence`)
      assert.equal(typeof entry.retryable, 'boolean')
    }
  })

  test('a family code is catalogued by its pattern, and only a code of its shape', () => {
    const family = ERROR_FAMILIES['agent.model-http-<status>']
    for (const code of ['agent.model-http-429', 'agent.model-http-500']) {
      assert.ok(isErrorCode(code), code)
      assert.equal(catalogueEntry(code), family)
      const { status, body } = errorReply(new VisError(code as ErrorCode, 'x'))
      assert.equal(status, family.status)
      assert.ok(ErrorEnvelopeSchema.safeParse(body).success)
    }
    for (const code of [
      'agent.model-http-',
      'agent.model-http-42',
      'agent.model-http-600',
      'agent.model-http-4290',
    ])
      assert.equal(isErrorCode(code), false, code)
  })

  test('the status conventions hold: *.not-found is 404, *.denied 403, unless an entry says otherwise', () => {
    // dist.not-found is the operator's to fix (no CPython to run), not a missing resource.
    const exceptions = new Set<string>(['dist.not-found'])
    for (const code of ERROR_CODES) {
      if (exceptions.has(code)) continue
      if (code.endsWith('.not-found')) assert.equal(ERROR_CATALOGUE[code].status, 404, code)
      if (code.endsWith('.denied')) assert.equal(ERROR_CATALOGUE[code].status, 403, code)
    }
    assert.equal(ERROR_CATALOGUE['dist.not-found'].status, 503)
  })

  test('a code the catalogue lacks is refused by VisError under test, and answers 500 elsewhere', () => {
    assert.throws(
      () => new VisError('made.up-code' as ErrorCode, 'x'),
      (e) => e instanceof TypeError && /made\.up-code.*not in the error catalogue/.test(e.message),
    )
    assert.equal(statusFor('made.up-code'), 500)
    // Outside the test runner, with no VIS_STRICT_ERROR_CODES, the error is kept (its message is
    // what a person needs) and answers 500 as a bug of ours.
    const env = { ...process.env }
    delete env.NODE_TEST_CONTEXT
    delete env.VIS_STRICT_ERROR_CODES
    const script = [
      "const { VisError } = await import('./src/util/errors.ts')",
      "const { errorReply } = await import('./src/http/errors.ts')",
      "const r = errorReply(new VisError('made.up-code', 'kept'))",
      'console.log(JSON.stringify(r))',
    ].join('\n')
    const run = (extra: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: root.pathname,
        env: { ...env, ...extra },
        encoding: 'utf8',
      })
    const loose = run({})
    assert.equal(loose.status, 0, loose.stderr)
    assert.deepEqual(JSON.parse(loose.stdout), {
      status: 500,
      body: { error: { code: 'made.up-code', message: 'kept', details: {} } },
    })
    const strict = run({ VIS_STRICT_ERROR_CODES: '1' })
    assert.notEqual(strict.status, 0)
    assert.match(strict.stderr, /"made\.up-code" is not in the error catalogue/)
  })

  test("OpenAPI's error code enum is the catalogue's", () => {
    const doc = openApiDocument(MOUNTED_ROUTES, '0.0.0', false) as unknown as {
      components: { schemas: { Error: { properties: { error: { properties: { code: unknown } } } } } }
    }
    const code = doc.components.schemas.Error.properties.error.properties.code as {
      anyOf: { enum?: string[]; pattern?: string }[]
    }
    const listed = code.anyOf.find((s) => s.enum)?.enum
    assert.deepEqual(listed, ERROR_CODES)
    const pattern = code.anyOf.find((s) => s.pattern)?.pattern
    assert.equal(pattern, ERROR_FAMILIES['agent.model-http-<status>'].pattern.source)
  })

  test('docs/errors.md is current (npm run docs:errors rewrites it)', () => {
    const doc = readFileSync(new URL('docs/errors.md', root), 'utf8')
    assert.equal(doc, renderErrorsDoc(), 'docs/errors.md is stale: run `npm run docs:errors`')
    for (const code of ERROR_CODES) assert.ok(doc.includes(`| \`${code}\` |`), code)
  })
})
