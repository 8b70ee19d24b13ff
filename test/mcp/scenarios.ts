// What every transport of `vis mcp` must do, checked with the official SDK's client.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { run, textOf, waitFor } from './helpers.js'

// A client, optionally one that offers these directories as its MCP roots.
export type Connect = (opts?: { roots?: () => string[] }) => Promise<Client>

const PNG_BLOCK = `import base64, struct, zlib
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
rows = b''.join(b'\\x00' + b'\\xff\\x00\\x00' * 2 for _ in range(2))
png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2, 2, 8, 2, 0, 0, 0))
       + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
vis_attach_bytes(png, 'red.png')
print(base64.b64encode(png).decode())`

export function serverScenarios(connect: Connect, root: string): void {
  test('lists python_execution, python_interrupt, session_reset and the file tools with their schemas', async () => {
    const c = await connect()
    const { tools } = await c.listTools()
    assert.deepEqual(
      tools.map((t) => t.name),
      ['python_execution', 'python_interrupt', 'session_reset', 'cat', 'ls', 'grep', 'patch'],
    )
    const py = tools.find((t) => t.name === 'python_execution')!
    assert.deepEqual(py.inputSchema.required, ['code'])
    assert.match(py.description ?? '', new RegExp(`Roots: ${root}\\. Network: off\\.`))
    const cat = tools.find((t) => t.name === 'cat')!
    assert.match(cat.description ?? '', /Read a text file as lines prefixed with anchors/)
    assert.match(cat.description ?? '', /In Python: cat\(path, offset=None, n=None, \/, \*, tail=None\)/)
    assert.equal((cat.inputSchema as { additionalProperties?: boolean }).additionalProperties, false)
    assert.deepEqual(cat.inputSchema.required, ['path'])
    const patch = tools.find((t) => t.name === 'patch')!
    assert.equal((patch.inputSchema.properties as any).edits.type, 'array')
    assert.equal(patch.annotations?.readOnlyHint, false)
  })

  test('blocks keep state between calls; a last expression comes back as its value', async () => {
    const c = await connect()
    const a = await run(c, 'import math\nx = 20\ndef double(v):\n    return v * 2')
    assert.equal(a.isError, false)
    assert.equal(textOf(a), '(no output)')
    const b = await run(c, 'double(x) + 2')
    assert.equal(textOf(b), '→ 42')
    const p = await run(c, 'print(math.sqrt(x * 5))')
    assert.equal(textOf(p), '10.0')
  })

  test("the workspace is importable, as in python3 run there: a root's package without any pyproject", async () => {
    const pkg = `wsmod_${process.pid}_${Date.now()}`
    mkdirSync(join(root, pkg), { recursive: true })
    writeFileSync(join(root, pkg, '__init__.py'), 'def add(a, b):\n    return a + b\n')
    const c = await connect()
    const r = await run(c, `from ${pkg} import add\nprint(add(2, 3))`)
    assert.equal(r.isError, false, textOf(r))
    assert.equal(textOf(r), '5')
  })

  test('a huge print is clipped as the agent loop clips it, with the notice saying how much', async () => {
    const c = await connect()
    const r = await run(c, 'print("x" * 1_048_576)')
    const text = textOf(r)
    assert.ok(text.length < 70_000, `returned ${text.length} characters`)
    assert.match(text, /\[vis: stdout clipped: [\d,]+ of [\d,]+ characters were cut\. Narrow the next block/)
  })

  test('an error is isError with the agent loop rendering: phase, message, excerpt, hint', async () => {
    const c = await connect()
    const r = await run(c, 'print("before")\nvalue = undefined_name + 1')
    assert.equal(r.isError, true)
    const text = textOf(r)
    assert.match(text, /^before\n✗ runtime error: NameError: name 'undefined_name' is not defined\n/)
    assert.match(text, /2 \| value = undefined_name \+ 1\n +\| +\^+/)
    assert.match(text, /\nhint: 'undefined_name' is not defined here; search tools and helpers with apropos/)
    assert.equal(text.match(/hint:/g)?.length, 1, 'the hint is shown once')
    const s = await run(c, 'def f(:\n    pass')
    assert.equal(s.isError, true)
    assert.match(textOf(s), /^✗ syntax error: SyntaxError: /)
    // The session survived both.
    assert.equal(textOf(await run(c, '1 + 1')), '→ 2')
  })

  test('an image attachment comes back as an image, and as a resource', async () => {
    const c = await connect()
    const r = await run(c, PNG_BLOCK)
    assert.equal(r.isError, false, textOf(r))
    const printed = textOf(r).trim()
    const image = r.content.find((x) => x.type === 'image') as { data: string; mimeType: string }
    assert.ok(image, JSON.stringify(r.content))
    assert.equal(image.mimeType, 'image/png')
    assert.equal(image.data, printed)
    const { resources } = await c.listResources()
    const res = resources.find((x) => x.name === 'red.png')
    assert.ok(res, JSON.stringify(resources))
    assert.equal(res.mimeType, 'image/png')
    const read = await c.readResource({ uri: res.uri })
    assert.equal((read.contents[0] as { blob: string }).blob, printed)
    const transcript = resources.find((x) => x.uri.endsWith('/transcript'))!
    const md = await c.readResource({ uri: transcript.uri })
    assert.match((md.contents[0] as { text: string }).text, /vis_attach_bytes\(png, 'red.png'\)/)
  })

  test('output streams as progress notifications while the block runs', async () => {
    const c = await connect()
    const seen: { progress: number; message?: string; at: number }[] = []
    const code = 'import time\nfor i in range(3):\n    print(f"step {i}", flush=True)\n    time.sleep(0.3)'
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
      onprogress: (p) => seen.push({ progress: p.progress, message: p.message, at: Date.now() }),
    })) as CallToolResult
    const done = Date.now()
    assert.equal(textOf(r), 'step 0\nstep 1\nstep 2')
    assert.ok(seen.length >= 2, `progress: ${JSON.stringify(seen)}`)
    assert.equal(seen.map((s) => s.message).join(''), 'step 0\nstep 1\nstep 2\n')
    assert.deepEqual(
      seen.map((s) => s.progress),
      seen.map((_, i) => i + 1),
    )
    assert.ok(seen[0]!.at < done, 'the first output arrived before the result')
  })

  test('a cancelled request interrupts its block; the session carries on', async () => {
    const c = await connect()
    const ac = new AbortController()
    let started = false
    const code =
      'import time\nreached = "start"\nprint("running", flush=True)\nfor _ in range(1200):\n    time.sleep(0.05)\nreached = "end"'
    const call = c.callTool({ name: 'python_execution', arguments: { code, session: 'cancel' } }, undefined, {
      timeout: 120_000,
      signal: ac.signal,
      onprogress: () => {
        started = true
      },
    })
    const rejected = assert.rejects(call)
    await waitFor('the block to print', () => started)
    ac.abort('changed my mind')
    await rejected
    // The next block runs at once: the long one was interrupted, not waited for.
    const r = await run(c, 'reached', { session: 'cancel' })
    assert.equal(textOf(r), '→ start')
    const { resources } = await c.listResources()
    const uris = resources.filter((x) => x.uri.endsWith('/transcript')).map((x) => x.uri)
    const texts = await Promise.all(
      uris.map(async (uri) => (await c.readResource({ uri })).contents[0] as { text: string }),
    )
    assert.ok(
      texts.some((t) => /KeyboardInterrupt: the block was interrupted/.test(t.text)),
      'the transcript records the interrupt',
    )
  })

  test('a cancelled request whose block waits behind another is cancelled in the queue: its code never runs', async () => {
    const c = await connect()
    const marker = join(root, `queued-${Date.now()}.txt`)
    let printed = false
    const long = c.callTool(
      {
        name: 'python_execution',
        arguments: {
          code: 'import time\nprint("busy", flush=True)\nwhile True:\n    time.sleep(0.05)',
          session: 'q',
        },
      },
      undefined,
      { timeout: 120_000, onprogress: () => (printed = true) },
    ) as Promise<CallToolResult>
    await waitFor('the first block to run', () => printed)
    const ac = new AbortController()
    const queued = c.callTool(
      {
        name: 'python_execution',
        arguments: { code: `open(${JSON.stringify(marker)}, "w").write("ran")`, session: 'q' },
      },
      undefined,
      { timeout: 120_000, signal: ac.signal },
    )
    const rejected = assert.rejects(queued)
    const blocksOfQ = async () => {
      const { resources } = await c.listResources()
      return resources.find((r) => r.title?.endsWith('(q)'))?.description ?? ''
    }
    await waitFor('the second block to be queued', async () => /\(2 blocks,/.test(await blocksOfQ()))
    ac.abort('not wanted any more')
    await rejected
    await waitFor('the queued block to be cancelled', async () => {
      const { resources } = await c.listResources()
      const t = resources.find((r) => r.title?.endsWith('(q)'))!
      const text = ((await c.readResource({ uri: t.uri })).contents[0] as { text: string }).text
      return /Cancelled before it started; it never ran/.test(text)
    })
    await c.callTool({ name: 'python_interrupt', arguments: { session: 'q' } })
    assert.equal((await long).isError, true)
    assert.equal(
      textOf(await run(c, `import os\nos.path.exists(${JSON.stringify(marker)})`, { session: 'q' })),
      '→ False',
    )
  })

  test('python_interrupt from a second request stops a running block; its result says so, its globals stay', async () => {
    const c = await connect()
    let printed = false
    const code = 'import time\nkept = "yes"\nprint("looping", flush=True)\nwhile True:\n    time.sleep(0.05)'
    const long = c.callTool({ name: 'python_execution', arguments: { code, session: 'spin' } }, undefined, {
      timeout: 120_000,
      onprogress: () => {
        printed = true
      },
    }) as Promise<CallToolResult>
    await waitFor('the block to print', () => printed)
    const intr = (await c.callTool({
      name: 'python_interrupt',
      arguments: { session: 'spin' },
    })) as CallToolResult
    assert.equal(JSON.parse(textOf(intr)).landed, true, textOf(intr))
    const r = await long
    assert.equal(r.isError, true)
    assert.match(textOf(r), /KeyboardInterrupt: the block was interrupted/)
    assert.equal(textOf(await run(c, 'kept', { session: 'spin' })), '→ yes')
  })

  test('an unknown tool and a missing resource are JSON-RPC errors with their MCP codes; bad arguments are isError', async () => {
    const c = await connect()
    await assert.rejects(
      c.callTool({ name: 'no_such_tool', arguments: {} }),
      (err: unknown) =>
        err instanceof McpError &&
        err.code === ErrorCode.InvalidParams &&
        /No tool named "no_such_tool"/.test(err.message),
    )
    await run(c, 'vis_attach_bytes(b"hi", "a.txt")')
    const transcript = (await c.listResources()).resources.find((r) => r.uri.endsWith('/transcript'))!
    const base = transcript.uri.replace(/\/transcript$/, '')
    for (const uri of [
      'vis://sessions/ses_nobody/transcript',
      `${base}/attachments/att_missing`,
      'file:///etc/passwd',
    ]) {
      await assert.rejects(
        c.readResource({ uri }),
        (err: unknown) =>
          err instanceof McpError && err.code === -32002 && /No (resource|attachment)/.test(err.message),
        uri,
      )
    }
    const bad = (await c.callTool({ name: 'python_execution', arguments: { code: 1 } })) as CallToolResult
    assert.equal(bad.isError, true)
    assert.match(textOf(bad), /python_execution: code: Expected string, received number/)
  })

  test('a session whose interpreter died runs the next block in a fresh one, and says so', async () => {
    const c = await connect()
    await run(c, 'before = 1', { session: 'dies' })
    const died = await run(c, 'import os\nos._exit(1)', { session: 'dies' })
    assert.equal(died.isError, true)
    assert.match(textOf(died), /worker\.died error: worker \d+ exited with code 1/)
    const next = await run(c, '"before" in globals(), 6 * 7', { session: 'dies' })
    assert.equal(next.isError, false, textOf(next))
    assert.match(
      textOf(next),
      /^\(Session ses_\w+'s worker was retired \(the worker exited with code 1\)\. This block ran in a fresh session: globals of earlier blocks are gone\)\n→ \[False, 42\]$/,
    )
    assert.equal(textOf(await run(c, '6 * 7', { session: 'dies' })), '→ 42', 'the note comes once')
  })

  test('labelled sessions are separate; session_reset starts a fresh interpreter', async () => {
    const c = await connect()
    await run(c, 'who = "main"')
    await run(c, 'who = "side"', { session: 'side' })
    assert.equal(textOf(await run(c, 'who')), '→ main')
    assert.equal(textOf(await run(c, 'who', { session: 'side' })), '→ side')
    const reset = (await c.callTool({
      name: 'session_reset',
      arguments: { session: 'side' },
    })) as CallToolResult
    assert.match(textOf(reset), /"closed": "ses_/)
    const after = await run(c, 'who', { session: 'side' })
    assert.equal(after.isError, true)
    assert.match(textOf(after), /NameError: name 'who' is not defined/)
    const idle = (await c.callTool({ name: 'python_interrupt', arguments: {} })) as CallToolResult
    assert.match(textOf(idle), /"landed": false/)
    const bad = (await c.callTool({
      name: 'python_execution',
      arguments: { code: 'x', session: '../x' },
    })) as CallToolResult
    assert.equal(bad.isError, true)
    assert.match(textOf(bad), /session: letters, digits/)
  })

  test('two clients get separate sessions and cannot read each other’s resources', async () => {
    const a = await connect()
    const b = await connect()
    await run(a, 'secret = "only a"')
    const rb = await run(b, '"secret" in globals()')
    assert.equal(textOf(rb), '→ False')
    const ra = await run(a, 'secret')
    assert.equal(textOf(ra), '→ only a')
    const aUris = (await a.listResources()).resources.map((r) => r.uri)
    const bUris = (await b.listResources()).resources.map((r) => r.uri)
    assert.ok(aUris.length > 0 && bUris.length > 0)
    assert.equal(aUris.filter((u) => bUris.includes(u)).length, 0, 'no resource is listed to both')
    await assert.rejects(
      b.readResource({ uri: aUris[0]! }),
      /No resource vis:\/\/sessions\/.* among this client's sessions/,
    )
  })

  test('the file tools work on the roots and refuse paths outside them', async () => {
    const c = await connect()
    writeFileSync(join(root, 'notes.txt'), 'alpha\nbeta\n')
    const cat = (await c.callTool({ name: 'cat', arguments: { path: 'notes.txt' } })) as CallToolResult
    assert.equal(cat.isError, undefined)
    assert.match(JSON.parse(textOf(cat)).content, /^1:[0-9a-f]+\|alpha\n2:[0-9a-f]+\|beta$/)
    const grep = (await c.callTool({ name: 'grep', arguments: { query: 'beta' } })) as CallToolResult
    assert.match(textOf(grep), /notes\.txt/)
    const patched = (await c.callTool({
      name: 'patch',
      arguments: { edits: [{ path: 'notes.txt', search: 'beta', replace: 'gamma' }] },
    })) as CallToolResult
    assert.equal(patched.isError, undefined, textOf(patched))
    assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'alpha\ngamma\n')
    const ls = (await c.callTool({ name: 'ls', arguments: {} })) as CallToolResult
    assert.match(textOf(ls), /notes\.txt/)
    const outside = (await c.callTool({ name: 'cat', arguments: { path: '/etc/passwd' } })) as CallToolResult
    assert.equal(outside.isError, true)
    assert.match(textOf(outside), /outside|not inside|denied/i)
    const wrong = (await c.callTool({
      name: 'cat',
      arguments: { path: 'notes.txt', bogus: 1 },
    })) as CallToolResult
    assert.equal(wrong.isError, true)
    assert.match(textOf(wrong), /bogus/)
  })

  test("a client's roots narrow its sessions to where they overlap the server's, never wider", async () => {
    const sub = join(root, 'narrow')
    mkdirSync(sub, { recursive: true })
    writeFileSync(join(root, 'outside-narrow.txt'), 'not for the narrow client\n')
    let offered = [sub]
    const c = await connect({ roots: () => offered })
    const { tools } = await c.listTools()
    const py = tools.find((t) => t.name === 'python_execution')!
    assert.match(py.description ?? '', new RegExp(`Roots: ${sub}\\. Network`))
    const inside = await run(c, `open(${JSON.stringify(join(sub, 'w.txt'))}, "w").write("ok")`)
    assert.equal(inside.isError, false, textOf(inside))
    assert.equal(readFileSync(join(sub, 'w.txt'), 'utf8'), 'ok')
    const outside = await run(c, `open(${JSON.stringify(join(root, 'outside-narrow.txt'))}).read()`)
    assert.equal(outside.isError, true)
    assert.match(textOf(outside), /PermissionError|denied/)
    const cat = (await c.callTool({
      name: 'cat',
      arguments: { path: join(root, 'outside-narrow.txt') },
    })) as CallToolResult
    assert.equal(cat.isError, true)
    // Roots that lie outside the server's give no file access at all (a new label: a new session).
    let toolsChanged = 0
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      toolsChanged++
    })
    assert.equal(c.getServerCapabilities()?.tools?.listChanged, true)
    offered = ['/usr']
    await c.sendRootsListChanged()
    await waitFor('notifications/tools/list_changed', () => toolsChanged > 0)
    await waitFor(
      'the narrowed tool list',
      async () => !(await c.listTools()).tools.some((t) => t.name === 'cat'),
    )
    const none = await run(c, `open(${JSON.stringify(join(sub, 'w.txt'))}).read()`, { session: 'usr' })
    assert.equal(none.isError, true)
    assert.match(textOf(none), /PermissionError|denied/)
    // The session started under the wider roots does not keep them: it starts afresh, and says so.
    const narrowed = await run(c, `marker = 1\nopen(${JSON.stringify(join(sub, 'w.txt'))}).read()`)
    assert.equal(narrowed.isError, true)
    assert.match(
      textOf(narrowed),
      new RegExp(`^\\(your roots changed from ${sub} to none: this session started afresh`),
    )
    assert.match(textOf(narrowed), /PermissionError|denied/)
    const again = await run(c, 'marker')
    assert.equal(textOf(again), '→ 1', 'no second restart while the roots stay the same')
  })
}
