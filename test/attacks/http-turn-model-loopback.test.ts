// ATTACK (surface 5, a turn started with a policy the server did not allow): a model request is
// the host's and leaves past the egress proxy, so SECURITY.md (Child turns, Models) holds a
// sub_loop child to the models the operator configured (agent.model-not-allowed: "a built-in
// preset's loopback address nobody configured" is refused before any connection). An HTTP
// client's `POST /v1/sessions/{id}/turns {"model": ...}` is not held to that set: any
// `<preset>/<anything>` makes the SERVER post the client's prompt to that preset's loopback port
// (lmstudio 127.0.0.1:1234, vllm :8000, llamacpp :8080, ollama :11434) from the host, outside every
// jail and the egress proxy, and store what answers as the turn's iterations, readable back. The
// server's configuration here names only an `openai` model; nothing configures lmstudio.
// On the current code the listener on 127.0.0.1:1234 receives the client's prompt.
// (The test binds 127.0.0.1:1234, LM Studio's port: on a machine running LM Studio it cannot start.)
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startServer } from '../../src/http/index.js'
import { ProviderDouble } from '../agent/double.js'
import { python } from '../agent/harness.js'
import { client } from '../http/helpers.js'

test('an HTTP turn cannot name a model the server did not configure (a loopback preset)', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-turnmodel-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-turnmodel-root-'))
  const bodies: string[] = []
  let listener: Server | undefined
  let double: ProviderDouble | undefined
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  const saved = process.env.VIS_HOME
  try {
    listener = createServer((req, res) => {
      let b = ''
      req.on('data', (c) => {
        b += c
      })
      req.on('end', () => {
        bodies.push(`${req.method} ${req.url} carries the prompt: ${b.includes('SSRF-BODY')}`)
        res.writeHead(500).end('{}')
      })
    })
    await new Promise<void>((res, rej) => {
      listener!.once('error', rej)
      listener!.listen(1234, '127.0.0.1', () => res())
    })
    process.env.VIS_HOME = home
    double = await new ProviderDouble().start()
    writeFileSync(
      join(home, 'agent.json'),
      JSON.stringify({
        model: 'openai/double-model',
        providers: { openai: { baseURL: double.openaiURL, apiKey: 'sk-http' } },
        stallMs: 2_000,
      }),
    )
    server = await startServer({ home, python, port: 0, pool: { size: 0 }, extensions: false })
    const call = client(server.url)
    const s = (await call('POST', '/v1/sessions', { roots: [root] })).body
    const r = await call('POST', `/v1/sessions/${s.id}/turns`, {
      prompt: 'SSRF-BODY from the HTTP client',
      model: 'lmstudio/anything',
    })
    assert.deepEqual(
      bodies,
      [],
      `the server posted the client's prompt to a loopback port nobody configured (turn ${r.status}: ${r.text.slice(0, 200)})`,
    )
    assert.equal(r.status, 400, r.text)
    assert.equal(r.body.error.code, 'agent.model-not-allowed', r.text)
    // Allowed: the configured model still runs a turn.
    double.script([{ text: 'fine' }])
    const ok = await call('POST', `/v1/sessions/${s.id}/turns`, { prompt: 'hello' })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.answer, 'fine')
  } finally {
    await server?.close()
    await double?.close()
    if (listener?.listening) await new Promise<void>((res) => listener!.close(() => res()))
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
    rmSync(home, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
  }
})
