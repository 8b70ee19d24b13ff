// Several vis processes on one home at once (issue 32 §1): `vis serve`, `vis mcp` and two
// `vis run`s, each running blocks while the others do. Every block any of them acknowledged is
// stored, finished, and each session's block positions and event sequence run without a gap.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { openStore } from '../../src/persistence/index.js'
import { ProviderDouble, pyCall } from '../agent/double.js'
import { runCaptured } from '../distribution/helpers.js'
import { childEnv, run as mcpRun, textOf } from '../mcp/helpers.js'

const vis = join(import.meta.dirname, '..', 'http', 'fixtures', 'vis.ts')
const tsx = import.meta.resolve('tsx')
const TOKEN = 'one-home-token-0123456789'

async function waitFor(what: string, check: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

test('vis serve, vis mcp and two vis runs share one home, each running blocks; nothing acknowledged is lost', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-onehome-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-onehome-root-'))
  writeFileSync(join(root, 'data.txt'), 'shared\n')
  const env = childEnv({ VIS_HOME: home, VIS_TOKEN: TOKEN })

  // The server, then an MCP host's server, both up before the runs start.
  const serve = spawn(
    process.execPath,
    ['--import', tsx, vis, 'serve', '--port', '0', '--allow-root', root],
    {
      env,
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let serveOut = ''
  let serveErr = ''
  serve.stdout.on('data', (d) => {
    serveOut += d
  })
  serve.stderr.on('data', (d) => {
    serveErr += d
  })
  const doubles = [await new ProviderDouble().start(), await new ProviderDouble().start()]
  const mcp = new Client({ name: 'one-home', version: '1.0.0' })
  try {
    await waitFor('vis serve to print its URL', () => /try: curl/.test(serveOut) || serve.exitCode !== null)
    assert.equal(serve.exitCode, null, serveErr)
    const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(serveOut)![1]!
    const http = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json = (await res.json()) as Record<string, unknown>
      assert.ok(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
      return json
    }
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', tsx, vis, 'mcp', '--root', root, '--pool', '0'],
        env,
        cwd: root,
        stderr: 'pipe',
      }),
      { timeout: 90_000 },
    )

    // Each run: a block that reads the workspace, then an answer.
    for (const [i, d] of doubles.entries()) {
      d.script([
        { text: `Run ${i}.`, calls: [pyCall(`print(open("data.txt").read().strip(), ${i})`)] },
        { text: `answer ${i}` },
      ])
    }
    const runs = doubles.map((d, i) =>
      runCaptured(process.execPath, ['--import', tsx, vis, 'run', `task ${i}`], {
        cwd: root,
        env: {
          ...env,
          VIS_MODEL: 'openai/double-model',
          OPENAI_BASE_URL: d.openaiURL,
          OPENAI_API_KEY: 'sk-one-home',
        },
      }),
    )
    let runsDone = false
    const settled = Promise.all(runs).finally(() => {
      runsDone = true
    })

    // Meanwhile blocks go through the server and the MCP server, until both runs ended (at
    // least three each, so they overlap the runs' start-up and their blocks).
    const session = (await http('POST', '/v1/sessions', { roots: [root] })).id as string
    const acknowledged: string[] = []
    let mcpCalls = 0
    for (let n = 0; n < 3 || !runsDone; n++) {
      const [block, reply] = await Promise.all([
        http('POST', `/v1/sessions/${session}/blocks`, { code: `print(${n} * 2)` }),
        mcpRun(mcp, `${n} + 100`, { session: 'side' }),
      ])
      assert.equal(block.status, 'done', JSON.stringify(block))
      assert.equal(block.stdout, `${n * 2}\n`)
      acknowledged.push(block.id as string)
      assert.equal(textOf(reply), `→ ${n + 100}`)
      mcpCalls++
      if (n > 400) throw new Error('the runs never ended')
    }
    const results = await settled
    const runSessions = results.map((r, i) => {
      assert.equal(r.status, 0, `vis run ${i}: ${r.stderr}`)
      assert.match(r.stdout, new RegExp(`^shared ${i}$`, 'm'))
      assert.match(r.stdout, new RegExp(`answer ${i}`))
      assert.doesNotMatch(r.stderr, /home-in-use|owned-elsewhere/)
      return /\[session (ses_\w+)/.exec(r.stderr)![1]!
    })
    await mcp.close()
    serve.kill('SIGTERM')
    await waitFor('vis serve to stop', () => serve.exitCode !== null || serve.signalCode !== null)

    // What the database holds, read after every process has gone.
    const store = openStore({ home })
    try {
      for (const id of acknowledged) assert.equal(store.blocks.require(id).status, 'done', id)
      const sessions = store.sessions.list({})
      const byTitle = new Map(sessions.map((s) => [s.id, s]))
      for (const id of [session, ...runSessions]) assert.ok(byTitle.has(id), `session ${id} is stored`)
      // The MCP server's labelled session holds one finished block per call.
      const mcpBlocks = sessions
        .filter((s) => s.id !== session && !runSessions.includes(s.id))
        .flatMap((s) => store.blocks.listBySession(s.id))
      assert.equal(mcpBlocks.length, mcpCalls)
      for (const s of sessions) {
        const blocks = store.blocks.listBySession(s.id)
        assert.deepEqual(
          blocks.map((b) => b.position),
          blocks.map((_, i) => i + 1),
          `block positions of ${s.id}`,
        )
        for (const b of blocks)
          assert.equal(b.status, 'done', `${b.id} in ${s.id}: ${JSON.stringify(b.error)}`)
        const seqs = (
          store.db.prepare('SELECT seq FROM session_events WHERE session_id = ? ORDER BY seq').all(s.id) as {
            seq: number
          }[]
        ).map((r) => r.seq)
        assert.ok(seqs.length > 0, `events of ${s.id}`)
        assert.deepEqual(
          seqs,
          seqs.map((_, i) => i + 1),
          `event seqs of ${s.id}`,
        )
      }
      // Each run's session has its block and its answer's turn.
      for (const id of runSessions) assert.equal(store.blocks.listBySession(id).length, 1)
    } finally {
      store.close()
    }
  } finally {
    await mcp.close().catch(() => {})
    if (serve.exitCode === null && serve.signalCode === null) serve.kill('SIGKILL')
    await Promise.all(doubles.map((d) => d.close()))
  }
})
