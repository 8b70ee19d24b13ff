// Extensions, doctor and display formatting over real HTTP on loopback, with real workers.
import assert from 'node:assert/strict'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { trustProject } from '../../src/extensions/trust.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { client, python, tempHome } from './helpers.js'

const { home, root } = tempHome('http-ext')
// The workspace root is the project: its .vis/extensions load and are masked in the jail.
const projectExt = join(root, '.vis', 'extensions')
mkdirSync(projectExt, { recursive: true })
writeFileSync(
  join(projectExt, 'calc.py'),
  'import vis\n\ndef double(x):\n    """Doubles x."""\n    return 2 * x\n\nvis.register(vis.Extension(name="calc", tools=[double]))\n',
)

// The person trusted the project's extensions (`vis ext trust`).
trustProject(home, root, projectExt)

describe('extensions over HTTP', () => {
  let server: VisServer
  let call: ReturnType<typeof client>
  before(async () => {
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, project: root })
    call = client(server.url)
  })
  after(async () => {
    await server.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  })

  test('GET /v1/extensions lists what loaded; a block calls its tool', async () => {
    const list = await call('GET', '/v1/extensions')
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.extensions.map((e: { name: string; tools: string[] }) => [e.name, e.tools]),
      [['calc', ['calc_double(x)']]],
    )
    assert.deepEqual(list.body.warnings, [])
    const s = await call('POST', '/v1/sessions', { roots: [root] })
    assert.equal(s.status, 201, s.text)
    const b = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: 'await calc_double(21)' })
    assert.equal(b.status, 200, b.text)
    assert.equal(b.body.result, 42, JSON.stringify(b.body.error))
  })

  test('POST /v1/extensions/reload picks up a broken edit as a warning; the previous version keeps working', async () => {
    writeFileSync(join(projectExt, 'calc.py'), 'import vis\n\nraise ImportError("half-written edit")\n')
    // The person's own edit, trusted: what is tested here is the import failing.
    trustProject(home, root, projectExt)
    const r = await call('POST', '/v1/extensions/reload')
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(
      r.body.extensions.map((e: { name: string }) => e.name),
      ['calc'],
    )
    assert.equal(r.body.warnings.length, 1)
    assert.equal(r.body.warnings[0].kept_previous, true)
    assert.match(r.body.warnings[0].reason, /half-written edit/)
    const doctor = await call('GET', '/v1/doctor')
    assert.equal(doctor.status, 200)
    const ext = doctor.body.checks.filter((c: { id: string }) => c.id.startsWith('extension'))
    assert.equal(ext.length, 1)
    assert.equal(ext[0].level, 'warn')
    assert.match(ext[0].message, /calc\.py: .*half-written edit/)
    assert.ok(doctor.body.exitCode >= 1)
    const id = (await call('GET', '/v1/sessions')).body.sessions[0].id
    const b = await call('POST', `/v1/sessions/${id}/blocks`, { code: 'await calc_double(5)' })
    assert.equal(b.body.result, 10, JSON.stringify(b.body.error))
  })

  test('GET /v1/sessions/:id?format=display adds code_display; the stored code is unchanged', async () => {
    const id = (await call('GET', '/v1/sessions')).body.sessions[0].id
    const code = 'y={"a":1,   "b":2}\nprint( y )'
    await call('POST', `/v1/sessions/${id}/blocks`, { code })
    const raw = await call('GET', `/v1/sessions/${id}`)
    assert.equal(raw.body.blocks.at(-1).code, code)
    assert.equal(raw.body.blocks.at(-1).code_display, undefined)
    const shown = await call('GET', `/v1/sessions/${id}?format=display`)
    assert.equal(shown.status, 200)
    assert.equal(shown.body.blocks.at(-1).code, code)
    assert.equal(shown.body.blocks.at(-1).code_display, 'y = {"a": 1, "b": 2}\nprint(y)\n')
    const bad = await call('GET', `/v1/sessions/${id}?format=pretty`)
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, 'http.invalid-query')
  })

  test('a root inside an extension directory is a 400 with the envelope', async () => {
    const r = await call('POST', '/v1/sessions', { roots: [projectExt] })
    assert.equal(r.status, 400, r.text)
    // A root inside the project's .vis folder: refused before any extension check (root-guard.ts).
    assert.equal(r.body.error.code, 'policy.root-in-vis-folder')
    assert.ok(r.body.error.message.includes('.vis folder'), r.body.error.message)
  })

  test('the OpenAPI document lists the extension routes and the display query', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).body
    assert.ok(doc.paths['/v1/extensions'].get)
    assert.ok(doc.paths['/v1/extensions/reload'].post)
    const params = doc.paths['/v1/sessions/{id}'].get.parameters.map((p: { name: string }) => p.name)
    assert.ok(params.includes('format'))
  })
})
