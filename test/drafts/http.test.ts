// Drafts over HTTP and in the CLI, across a `vis serve` restart (a real server on loopback).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startServer } from '../../src/http/server.js'
import { client } from '../http/helpers.js'
import { newHome, newRepo, python, treeHash } from './helpers.js'

const vis = fileURLToPath(new URL('../http/fixtures/vis.ts', import.meta.url))

test('the draft routes: create, run, diff, conflict, restart, apply; the CLI shows and exports the draft', async () => {
  const home = newHome()
  const root = newRepo()
  const before = treeHash(root)
  let server = await startServer({ home, python, port: 0, pool: { size: 0 } })
  let call = client(server.url)
  let id: string
  try {
    const s = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(s.status, 201, s.text)
    id = s.body.id
    assert.deepEqual((await call('GET', `/v1/sessions/${id}/draft`)).body, { mode: 'trunk', draft: null })

    const bad = await call('POST', `/v1/sessions/${id}/draft`, { label: 'x', extra: 1 })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'http.invalid-body')
    const made = await call('POST', `/v1/sessions/${id}/draft`, { label: 'via http' })
    assert.equal(made.status, 201, made.text)
    assert.equal(made.body.draft.label, 'via http')
    const twice = await call('POST', `/v1/sessions/${id}/draft`, { label: 'again' })
    assert.equal(twice.status, 409)
    assert.equal(twice.body.error.code, 'draft.exists')

    const b = await call('POST', `/v1/sessions/${id}/blocks`, {
      code: "open('edit.txt', 'w').write('http edit\\n')\nopen('added.txt', 'w').write('new\\n')",
    })
    assert.equal(b.body.status, 'done', b.text)
    const shown = await call('GET', `/v1/sessions/${id}`)
    assert.equal(shown.body.draft.mode, 'draft')
    assert.equal(shown.body.draft.draft.files_changed, 2)
    const diff = await call('GET', `/v1/sessions/${id}/draft/diff`)
    assert.deepEqual(
      diff.body.changes.map((c: { path: string; status: string }) => `${c.status} ${c.path}`),
      ['added added.txt', 'changed edit.txt'],
    )
    assert.match(diff.body.diff, /-line 1\n-line 2\n-line 3\n\+http edit\n/)
    const doc = await call('GET', '/v1/openapi.json')
    for (const p of [
      '/v1/sessions/{id}/draft',
      '/v1/sessions/{id}/draft/diff',
      '/v1/sessions/{id}/draft/apply',
    ])
      assert.ok(doc.body.paths[p], `OpenAPI documents ${p}`)
  } finally {
    await server.close()
  }

  // The CLI reads the store and the draft's directory while no server runs.
  const env = { ...process.env, VIS_HOME: home }
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', vis, ...args], { env, encoding: 'utf8', timeout: 60_000 })
  const show = cli('sessions', 'show', id)
  assert.equal(show.status, 0, show.stderr)
  assert.match(show.stdout, /works on draft "via http" \(copy, since .*, 2 file\(s\) changed\)/)
  assert.match(show.stdout, /\+http edit/)
  const exported = cli('sessions', 'export', id, '--format', 'json')
  assert.equal(exported.status, 0, exported.stderr)
  const t = JSON.parse(exported.stdout)
  assert.equal(t.draft.mode, 'draft')
  assert.match(t.draft.diff, /\+\+\+ b\/added\.txt/)
  const md = cli('sessions', 'export', id)
  assert.match(md.stdout, /## Draft\n\ndraft "via http"[^\n]*\n\n```diff\ndiff --git a\/added\.txt/)
  assert.deepEqual(treeHash(root), before)

  // A restarted server finds the draft; a real change since makes apply refuse.
  server = await startServer({ home, python, port: 0, pool: { size: 0 } })
  call = client(server.url)
  try {
    const st = await call('GET', `/v1/sessions/${id}/draft`)
    assert.equal(st.body.draft.label, 'via http')
    const seen = await call('POST', `/v1/sessions/${id}/blocks`, { code: "print(open('added.txt').read())" })
    assert.equal(seen.body.stdout, 'new\n\n', seen.text)
    writeFileSync(join(root, 'edit.txt'), 'changed by hand\n')
    const refused = await call('POST', `/v1/sessions/${id}/draft/apply`, {})
    assert.equal(refused.status, 409)
    assert.equal(refused.body.error.code, 'draft.conflict')
    assert.match(refused.body.error.message, /edit\.txt/)
    assert.deepEqual(refused.body.error.details.conflicts, ['edit.txt'])
    const ok = await call('POST', `/v1/sessions/${id}/draft/apply`, { theirs: true })
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual(ok.body.landed, ['added.txt'])
    assert.equal(readFileSync(join(root, 'edit.txt'), 'utf8'), 'changed by hand\n')
    assert.equal(readFileSync(join(root, 'added.txt'), 'utf8'), 'new\n')
    const none = await call('POST', `/v1/sessions/${id}/draft/abandon`, { why: 'nothing left' })
    assert.equal(none.status, 409)
    assert.equal(none.body.error.code, 'draft.none')
    // Apply on the trunk is a no-op, not an error: a retried apply whose first answer was lost succeeds.
    const again = await call('POST', `/v1/sessions/${id}/draft/apply`, {})
    assert.equal(again.status, 200, again.text)
    assert.deepEqual(again.body, { status: 'noop', draft: null, landed: [], kept_theirs: [] })
    const both = await call('POST', `/v1/sessions/${id}/draft/apply`, { theirs: true, ours: true })
    assert.equal(both.status, 400, both.text)
  } finally {
    await server.close()
  }
})
