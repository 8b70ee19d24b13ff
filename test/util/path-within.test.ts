// One containment test for paths (src/util/path-within.ts): by whole components, the directory
// itself included, '/' holding everything.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { within } from '../../src/util/path-within.js'

test('a path is within its directory, the directory itself and what lies beneath it', () => {
  assert.equal(within('/a/b', '/a/b'), true)
  assert.equal(within('/a/b/c', '/a/b'), true)
  assert.equal(within('/a/b/c/d', '/a/b'), true)
})

test('a sibling sharing a prefix, a parent or another tree is not within', () => {
  assert.equal(within('/a/bc', '/a/b'), false)
  assert.equal(within('/a/b.d', '/a/b'), false)
  assert.equal(within('/a', '/a/b'), false)
  assert.equal(within('/x/b', '/a/b'), false)
})

test("'/' holds every absolute path, and a directory given with its separator holds its children", () => {
  assert.equal(within('/', '/'), true)
  assert.equal(within('/a', '/'), true)
  assert.equal(within('/a/b/c', '/a/b/'), true)
  assert.equal(within('/a/bc', '/a/b/'), false)
})
