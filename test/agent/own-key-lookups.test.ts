// Lookups keyed by a name someone other than the configuring person chose (a client's or a
// block's model, an agent definition's tools and model, a git subcommand, a variable in an
// mcp.json value, a --with name) read only the configuration object's own keys: the names of
// Object.prototype's members ("constructor", "toString", "__proto__", "hasOwnProperty") are
// names nobody configured, not functions to use as a model, a window, a price or a rule.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { allowedChildModel, allowedTurnModel, childModelRule } from '../../src/agent/child-models.js'
import { type AgentConfig, priceFor } from '../../src/agent/config.js'
import { contextWindow } from '../../src/agent/context-window.js'
import { parseWith } from '../../src/distribution/packages/sets.js'
import { placesIn } from '../../src/mcp-client/env-spellings.js'
import { mapClaudeModel, mapClaudeTools } from '../../src/skills/claude-map.js'
import { gitReadsOnly } from '../../src/tools/git/guard.js'
import { LANGUAGES } from '../../src/tools/outline/languages.js'
import { definitions } from '../../src/tools/outline/skeleton.js'
import type { SyntaxNode } from '../../src/tools/outline/syntax-node.js'

const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']
const ctx = { sessionId: 's-1', op: 'sub_loop' }

test('a child model (sub_loop(model=...)) named after an Object member is refused as not allowed', () => {
  const rule = childModelRule({ aliases: { fast: 'openai/m' }, providers: {} } as never, {})
  for (const m of INHERITED) {
    assert.throws(
      () => allowedChildModel(rule, m, 'openai/parent', ctx),
      (e: { code?: string }) => e.code === 'agent.model-not-allowed',
      m,
    )
    // The HTTP turn: not <provider>/<model>, so passed on as given for agent.bad-model.
    assert.equal(allowedTurnModel(rule, m, ctx), m)
  }
  // Allowed: an own alias and the parent's model.
  assert.equal(allowedChildModel(rule, 'fast', 'openai/parent', ctx), 'openai/m')
  assert.equal(allowedChildModel(rule, 'openai/parent', 'openai/parent', ctx), 'openai/parent')
})

test("an agent definition's model and tools named after Object members map to nothing configured", () => {
  for (const m of INHERITED) {
    const got = mapClaudeModel(m, 'openai/parent', { sonnet: 'anthropic/s' })
    assert.equal(got.model, 'openai/parent', m)
    assert.match(got.note ?? '', /is not in agent.json's "aliases"/)
  }
  assert.equal(mapClaudeModel('sonnet', 'openai/parent', { sonnet: 'anthropic/s' }).model, 'anthropic/s')
  assert.deepEqual(mapClaudeTools([...INHERITED, 'Read']), { tools: ['cat'], ignored: INHERITED })
})

test('a model named after an Object member has the default window and no price', () => {
  const config = { prices: { m: { input: 1, output: 1 } } } as unknown as AgentConfig
  for (const m of INHERITED) {
    assert.equal(typeof contextWindow({ contextWindows: {} }, { name: 'openai', model: m }), 'number', m)
    assert.equal(priceFor(config, { provider: 'openai', model: m }), undefined, m)
  }
  assert.equal(contextWindow({ contextWindows: { m: 7 } }, { name: 'openai', model: 'm' }), 7)
  assert.deepEqual(priceFor(config, { provider: 'openai', model: 'm' }), { input: 1, output: 1 })
})

test('a git subcommand named after an Object member is not a reading one', () => {
  for (const m of INHERITED) assert.equal(gitReadsOnly([m]), false, m)
  assert.equal(gitReadsOnly(['branch', '--list']), true)
})

// Since the seventeenth outsider pass a variable the server is not given is reported (refused by the
// caller), not read as empty: Object.prototype's function would have made it a given one.
test('an mcp.json variable named after an Object member is one the server is not given', () => {
  const { unbounded } = placesIn('$constructor/w/x', '/cwd', { HOME: '/h' }, '/h')
  assert.ok(
    unbounded.some((u) => u.includes('constructor is no variable the server is given')),
    JSON.stringify(unbounded),
  )
  assert.ok(placesIn('$HOME/y', '/cwd', { HOME: '/h' }, '/h').paths.includes('/h/y'))
})

test('--with names after Object members are not sets or aliases', () => {
  const sel = parseWith(['constructor', 'toString'])
  assert.deepEqual(sel.packages, [])
  assert.equal(parseWith(['numpy']).packages.length, 1)
})

test("the outline's definition rules are looked up by a node type's own key", () => {
  // A syntax node whose type is spelled like an Object member is no definition (before: the
  // rule was Object.prototype's function and the outline threw "rule.name is not a function").
  const leaf = (type: string) => ({ type, namedChildren: [] }) as unknown as SyntaxNode
  const root = { type: 'module', namedChildren: INHERITED.map(leaf) } as unknown as SyntaxNode
  for (const lang of LANGUAGES) {
    const got = definitions(root, lang, [], { maxDepth: 2, maxDefs: 10, maxNodes: 100 })
    assert.deepEqual(got, { defs: [], truncated: false })
  }
})
