// ATTACK (surface 2, child loops; surface 6, egress): `sub_loop(prompt, model=...)` takes any
// `<provider>/<model>` from the block, and the built-in presets name loopback addresses
// (ollama 127.0.0.1:11434, lmstudio :1234, vllm :8000, llamacpp :8080). So a block of a session
// with the network OFF makes the HOST send a POST (/v1/chat/completions, a JSON body whose
// messages carry the block's prompt text) to a service on the host's loopback that the egress
// policy would refuse under any list, and reads that service's answer back: the provider's error
// (status and body) comes back verbatim in the sub_loop's exception. Any local service on those
// ports (a dev server, an admin UI) is reachable and its response readable; which preset answers
// at all is a port probe. The user never configured these providers.
// On the code before the fix the listener gets the request and the block prints its body.
//
// The fix (src/agent/child-models.ts): a child may only use a model the person configured, and is
// refused before any request (agent.model-not-allowed); a configured endpoint's error reaches the
// block as its code and status only.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { pyCall, type Recorded } from '../agent/double.js'
import { harness, lastChatMessage } from '../agent/harness.js'

const MARKER = 'LOOPBACK-ONLY-SERVICE-c0nf1g'
const PRESETS: [string, number][] = [
  ['llamacpp', 8080],
  ['vllm', 8000],
  ['lmstudio', 1234],
  ['ollama', 11434],
]
const SUB_LOOPS = { concurrency: 2, timeoutMs: 60_000, maxDepth: 2 }

// A loopback service that is no model server: it notes every request and answers with a page.
function service(seen: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body.slice(0, 120)}`)
      res.writeHead(404, { 'content-type': 'text/html' })
      res.end(`<html>${MARKER} admin=hunter2</html>`)
    })
  }
}

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => resolve(true))
  })
}

// The preset whose port this test could take (its requests are then counted), else the first
// preset: the refusal is asserted either way, and the next test shows it comes before any
// connection on a port that is always free.
async function listenOnFreePreset(seen: string[]): Promise<{ preset: string; server?: Server }> {
  for (const [preset, port] of PRESETS) {
    const server = createServer(service(seen))
    if (await listen(server, port)) return { preset, server }
  }
  return { preset: PRESETS[0]![0] }
}

async function listenAnywhere(seen: string[]): Promise<{ server: Server; url: string }> {
  const server = createServer(service(seen))
  assert.ok(await listen(server, 0))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

// A child's conversation starts with its task; the parent's holds it only in its code.
const isChild = (req: Recorded) =>
  JSON.stringify(req.body.messages.find((m: { role: string }) => m.role === 'user')).includes('CHILD-TASK')

test('a block with the network off cannot make the host talk to a loopback service through a provider preset', async () => {
  const seen: string[] = []
  const got = await listenOnFreePreset(seen)
  const h = await harness({ config: { subLoops: SUB_LOOPS } })
  try {
    // The session's network is off (the harness's default policy).
    assert.equal(
      (h.engine.sessionView(h.sessionId).policy as { network: { enabled: boolean } }).network.enabled,
      false,
    )
    h.double.script([], (req) => {
      const b = JSON.stringify(req.body)
      if (b.includes('PARENT-' + 'DONE')) return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            `try:\n    print('PARENT-' + 'DONE', await sub_loop('knock knock', model='${got.preset}/x'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''), str(e)[:600])`,
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    const out = h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout ?? ''
    assert.deepEqual(
      { requestsReachedLoopbackService: seen.length, responseInBlock: out.includes(MARKER) },
      { requestsReachedLoopbackService: 0, responseInBlock: false },
      `${seen.join('\n')}\n${out}`,
    )
    // Refused for the right reason, naming what is allowed and how to allow more.
    assert.match(
      out,
      new RegExp(
        `^PARENT-DONE refused agent\\.model-not-allowed sub_loop: A child turn may not use model "${got.preset}/x": ` +
          'only models the person configured are allowed \\(openai/double-model, openai/<any model>, ',
      ),
    )
    assert.match(out, /agent\.json's "aliases"/)
    assert.equal(r.children.length, 0)
  } finally {
    await h.close()
    got.server?.close()
  }
})

test('a provider only the environment opens is refused before any connection, for sub_loop and agent(); configured models still run', async () => {
  const seen: string[] = []
  const { server, url } = await listenAnywhere(seen)
  // The host's environment holds a key and an address for anthropic; agent.json names neither.
  const saved = { url: process.env.ANTHROPIC_BASE_URL, key: process.env.ANTHROPIC_API_KEY }
  process.env.ANTHROPIC_BASE_URL = url
  process.env.ANTHROPIC_API_KEY = 'sk-env-only'
  const h = await harness({ config: { subLoops: SUB_LOOPS, aliases: { fast: 'openai/fast-model' } } })
  try {
    // agent.json names openai (the harness's double) only.
    delete h.agent.config.providers.anthropic
    mkdirSync(join(h.root, '.claude', 'agents'), { recursive: true })
    writeFileSync(
      join(h.root, '.claude', 'agents', 'remote.md'),
      '---\nname: remote\ndescription: Runs elsewhere.\nmodel: anthropic/claude-x\n---\nYou help.\n',
    )
    await h.engine.dropWorker(h.sessionId)
    h.double.script([], (req) => {
      if (isChild(req)) return { text: `child of ${req.body.model}` }
      if (JSON.stringify(lastChatMessage(req.body)).includes('PARENT-' + 'DONE'))
        return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            "for m in ['anthropic/claude-x', 'openai/other-model', 'fast']:\n" +
              '    try:\n' +
              "        print(m, await sub_loop('CHILD-TASK', model=m))\n" +
              '    except Exception as e:\n' +
              "        print(m, 'refused', getattr(e, 'code', ''))\n" +
              'try:\n' +
              "    print('agent', await agent('remote', 'CHILD-TASK'))\n" +
              'except Exception as e:\n' +
              "    print('agent refused', getattr(e, 'code', ''))\n" +
              "print('PARENT-' + 'DONE')",
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    assert.equal(r.status, 'done', JSON.stringify(r.error))
    assert.equal(
      h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout,
      'anthropic/claude-x refused agent.model-not-allowed\n' +
        'openai/other-model child of other-model\n' +
        'fast child of fast-model\n' +
        'agent refused agent.model-not-allowed\n' +
        'PARENT-DONE\n',
    )
    assert.deepEqual(seen, [], 'the environment-only endpoint was contacted')
  } finally {
    await h.close()
    server.close()
    for (const [k, v] of [
      ['ANTHROPIC_BASE_URL', saved.url],
      ['ANTHROPIC_API_KEY', saved.key],
    ] as const) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
})

test("a configured endpoint's error reaches the block as its code and status, never its body", async () => {
  const seen: string[] = []
  const { server, url } = await listenAnywhere(seen)
  const h = await harness({ config: { subLoops: SUB_LOOPS } })
  try {
    // The person configured vllm at this address; it answers like no model server would.
    h.agent.config.providers.vllm = { baseURL: `${url}/v1` }
    h.double.script([], (req) => {
      if (JSON.stringify(lastChatMessage(req.body)).includes('PARENT-' + 'DONE'))
        return { text: 'parent done' }
      return {
        calls: [
          pyCall(
            "try:\n    print('PARENT-' + 'DONE', await sub_loop('CHILD-TASK', model='vllm/x'))\nexcept Exception as e:\n    print('PARENT-' + 'DONE refused', getattr(e, 'code', ''), str(e))",
          ),
        ],
      }
    })
    const r = await h.agent.turn(h.sessionId, 'PARENT-TASK')
    const out = h.engine.getBlock(r.iterations[0]!.block_ids[0]!).stdout ?? ''
    // Allowed: the request went out to the configured endpoint.
    assert.equal(seen.length, 1, seen.join('\n'))
    assert.match(
      out,
      /^PARENT-DONE refused agent\.sub-loop-failed .*its model request failed \(agent\.model-http-404\)/,
    )
    assert.ok(!out.includes(MARKER), out)
    assert.ok(!out.includes(url), out)
    // The person still reads the whole answer in the child turn's record.
    const child = h.agent.getTurn(r.children[0]!.session_id, r.children[0]!.turn_id)
    assert.equal(child.error?.code, 'agent.model-http-404')
    assert.ok(child.error?.message.includes(MARKER), child.error?.message)
  } finally {
    await h.close()
    server.close()
  }
})
