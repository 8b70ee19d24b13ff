// The group an answer is charged to is read from the same parse the router makes of the request
// target (seventeenth outsider pass: an absolute-form target, or one with `/../`, named no session
// or another one, and its answer escaped its session's share). The attack tests that proved it used
// attachments for pressure, which are now sent a piece at a time; this checks the parse itself.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { test } from 'node:test'
import { answerGroup } from '../../src/http/answer-budget.js'

const group = (url: string, headers: Record<string, string> = {}) =>
  answerGroup({ url, headers } as unknown as IncomingMessage)

test("an answer's group is the session the routed path names, however the target is spelled", () => {
  assert.equal(group('/v1/sessions/A/attachments/x'), 'A')
  assert.equal(group('http://127.0.0.1:9/v1/sessions/A/attachments/x'), 'A', 'absolute form')
  assert.equal(group('HTTP://127.0.0.1:9/v1/sessions/A/blocks/b'), 'A', 'absolute form, scheme in capitals')
  assert.equal(group('/v1/other/../sessions/A/blocks/b'), 'A', 'dot segments resolved as the router does')
  assert.equal(group('/v1/sessions/%41/blocks/b'), 'A', 'percent-encoded id')
  assert.equal(group('/v1/sessions/A?x=/v1/sessions/B'), 'A', 'the query names nothing')
  // The Host header cannot move the path: `//B/...` stays a path the router does not take.
  assert.notEqual(group('//v1/sessions/A/x', { host: 'evil' }), 'evil')
})

test('an answer naming no session is an MCP session group or a group of its own', () => {
  assert.equal(group('/mcp', { 'mcp-session-id': 'm1' }), 'mcp:m1')
  const a = group('/v1/health')
  const b = group('/v1/health')
  assert.match(a, /^answer:/)
  assert.notEqual(a, b)
})
