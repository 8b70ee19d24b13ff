// Sessions over real worker processes with a real embedded CPython.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { createRuntime, type Runtime } from '../../src/sessions/create-runtime.js'
import type { SessionEvent } from '../../src/sessions/events.js'
import { isVisError } from '../../src/util/errors.js'
import { isAlive, python, tempHome, waitFor } from './helpers.js'

const { home, root } = tempHome('session')

describe('a session runs blocks in its own worker', () => {
  let rt: Runtime
  before(async () => {
    rt = await createRuntime({ home, python, pool: { size: 1 }, interruptAckMs: 500 })
  })
  after(async () => {
    await rt.close()
  })

  test('globals persist across blocks and bound tools run on the host', async () => {
    const s = await rt.createSession({ roots: [root] })
    s.bind('echo', async (x: string) => `<${x}>`, { doc: 'Echoes.', signature: '(x)' })
    const tree = s.processTree()
    assert.deepEqual(await s.runBlock('n = 41'), {}, 'nothing printed, no value, no error')
    const r = await s.runBlock('n += 1\nprint(n, await echo("hi"))', { timeoutMs: 30_000 })
    assert.equal(r.stdout, '42 <hi>\n')
    await s.dispose()
    for (const pid of tree) assert.equal(isAlive(pid), false, `process ${pid} is gone`)
  })

  test('the default file tools are bound into every session', async () => {
    writeFileSync(join(root, 'note.txt'), 'from the host\n')
    const s = await rt.createSession({ roots: [root] })
    assert.ok(s.toolNames().includes('cat') && s.toolNames().includes('ls'))
    assert.equal(s.toolNames().includes('shell'), false, 'shell is off unless the session turns it on')
    const r = await s.runBlock(
      `print("from the host" in str(cat(${JSON.stringify(join(root, 'note.txt'))})))`,
    )
    assert.equal(r.stdout, 'True\n')
    await s.dispose()
  })

  test('a file closed in the outbox comes back as an attachment the host can read', async () => {
    const s = await rt.createSession({ roots: [root] })
    const r = await s.runBlock(
      'import os\nwith open(os.path.join(os.environ["VIS_OUTBOX"], "report.txt"), "w") as f:\n    f.write("made in the sandbox")',
    )
    const att = r.attachments?.[0] as { name: string; path: string }
    assert.equal(att.name, 'report.txt')
    assert.equal(readFileSync(att.path, 'utf8'), 'made in the sandbox')
    await s.dispose()
  })

  test('a tool failure reaches the guest as an exception with the host message', async () => {
    const s = await rt.createSession({ roots: [root] })
    s.bind('fail', () => {
      throw new Error('disk on fire')
    })
    const r = await s.runBlock('try:\n    fail()\nexcept Exception as e:\n    print("caught", e)')
    assert.match(r.stdout ?? '', /caught .*disk on fire/)
    await s.dispose()
  })

  test('a name the session never bound is refused with a message that says so', async () => {
    const s = await rt.createSession({ roots: [root] })
    // Blocks may not import _vis, so this goes through the raw exec op.
    await s.exec('import _vis\nreply = _vis.host_call("nope", "[]")')
    const r = (await s.eval('reply')) as { value: string }
    assert.match(r.value, /never bound a tool named \\"nope\\"/)
    await s.dispose()
  })

  test('events report start, output and finish; partial stdout can be taken mid-block', async () => {
    const s = await rt.createSession({ roots: [root] })
    const events: SessionEvent[] = []
    s.subscribe((e) => events.push(e))
    let release!: () => void
    const gate = new Promise<void>((r) => {
      release = r
    })
    s.bind('gate', () => gate)
    const run = s.runBlock('print("before", flush=True)\nawait gate()\nprint("after")')
    await waitFor(() => events.some((e) => e.type === 'output'), 5000, 'streamed output')
    assert.equal(s.takePartialStdout(), 'before\n')
    release()
    const r = await run
    assert.equal(r.stdout, 'before\nafter\n')
    const types = events.map((e) => e.type)
    assert.equal(types[0], 'block.started')
    assert.equal(types.at(-1), 'block.finished')
    await s.dispose()
  })

  test('one block at a time: a second waits in order, or is refused when asked not to wait', async () => {
    const s = await rt.createSession({ roots: [root] })
    const a = s.runBlock('import time\ntime.sleep(0.3)\norder = ["a"]')
    const b = s.runBlock('order.append("b")\nprint(order)')
    await assert.rejects(s.runBlock('1', { wait: false }), (e) => isVisError(e, 'session.busy'))
    await a
    assert.equal((await b).stdout, "['a', 'b']\n")
    await s.dispose()
  })

  test('a timeout interrupts the block and says so; the session stays usable', async () => {
    const s = await rt.createSession({ roots: [root] })
    const r = await s.runBlock('print("spinning", flush=True)\nwhile True:\n    pass', { timeoutMs: 300 })
    assert.equal(r.timedOut, true)
    assert.equal(r.error?.phase, 'timeout')
    assert.equal((await s.runBlock('print("alive")')).stdout, 'alive\n')
    await s.dispose()
  })

  test('interrupt cancels a host tool that never returns: the tool sees its abort signal', async () => {
    const s = await rt.createSession({ roots: [root] })
    let called = false
    let aborted: unknown
    s.bind('stall', (ctx: { signal: AbortSignal }) => {
      called = true
      ctx.signal.addEventListener('abort', () => {
        aborted = ctx.signal.reason
      })
      return new Promise(() => undefined)
    })
    const run = s.runBlock('await stall()')
    await waitFor(() => called, 5000, 'the tool call')
    const r = await s.interrupt()
    assert.deepEqual(r, { landed: true, retired: false })
    const out = await run
    assert.ok(out.error, 'the block failed')
    assert.ok(isVisError(aborted, 'worker.interrupted'))
    assert.equal((await s.runBlock('print("next")')).stdout, 'next\n')
    await s.dispose()
  })

  test('a child SIGKILLed mid-block fails the block with its log tail and the session is retired', async () => {
    const s = await rt.createSession({ roots: [root] })
    const retired: SessionEvent[] = []
    s.on('worker.retired', (e) => retired.push(e))
    const run = s.runBlock('print("working", flush=True)\nimport time\ntime.sleep(30)')
    await waitFor(() => s.takePartialStdout() !== '', 5000, 'the block to print')
    // The helper itself (jailed, the leaf under bubblewrap), as an OOM kill would hit it.
    process.kill(s.processTree().at(-1)!, 'SIGKILL')
    await assert.rejects(
      run,
      (e) => isVisError(e, 'worker.died') && /worker-\d+\.log/.test((e as Error).message),
    )
    assert.equal(s.state, 'retired')
    assert.equal(retired.length, 1)
    await assert.rejects(s.runBlock('1'), (e) => isVisError(e, 'worker.retired'))
    await s.dispose()
  })

  test('a timeout that cannot stop the block (a frozen child) replaces the worker and answers as a timeout', async () => {
    const s = await rt.createSession({ roots: [root] })
    const run = s.runBlock('print("working", flush=True)\nimport time\ntime.sleep(30)', { timeoutMs: 300 })
    await waitFor(() => s.takePartialStdout() !== '', 5000, 'the block to print')
    const frozen = s.processTree()
    process.kill(frozen.at(-1)!, 'SIGSTOP')
    const r = await run
    assert.equal(r.timedOut, true)
    assert.equal(r.error?.phase, 'timeout')
    assert.equal(r.workerReplaced, true)
    assert.match(r.error?.message ?? '', /replaced by a fresh one/)
    assert.equal(r.stdout, 'working\n', 'what it printed before it stopped')
    assert.equal(s.state, 'ready')
    await waitFor(() => frozen.every((p) => !isAlive(p)), 5000, 'the frozen tree to die')
    assert.equal((await s.runBlock('print("fresh")')).stdout, 'fresh\n')
    await s.dispose()
  })

  test('an interrupt a frozen child never acknowledges kills it within the bound; a fresh worker takes over', async () => {
    const s = await rt.createSession({ roots: [root] })
    const run = s.runBlock('print("working", flush=True)\nimport time\ntime.sleep(30)')
    await waitFor(() => s.takePartialStdout() !== '', 5000, 'the block to print')
    const tree = s.processTree()
    process.kill(tree.at(-1)!, 'SIGSTOP')
    const t0 = performance.now()
    assert.deepEqual(await s.interrupt(), { landed: false, retired: true })
    assert.ok(performance.now() - t0 < 2000)
    const r = await run
    assert.equal(r.error?.phase, 'interrupted')
    assert.equal(r.workerReplaced, true)
    assert.equal(r.survived?.cause, 'interrupt')
    await waitFor(() => tree.every((p) => !isAlive(p)), 2000, 'the worker tree to die')
    assert.equal(s.state, 'ready')
    await s.dispose()
  })
})
