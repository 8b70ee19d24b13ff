// asyncio as models write it: `asyncio.run(main())` with `asyncio.gather(tool(a), tool(b))`,
// tasks, wait_for. Under asyncio's own loop a tool call used to settle on the spot, one after
// the other; now the calls of sibling tasks are in flight together (vis_guest/loopcalls.py).
// Real sessions; the tools count how many of them run at once.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { loggedSession } from './logged-session.js'

const tools = loggedSession('forms-asyncio', 80)

const run = (code: string, timeoutMs = 120_000) => tools.session.runBlock(code, { timeoutMs })

describe('tool calls under asyncio.run run concurrently', () => {
  test('asyncio.gather of tool calls inside asyncio.run(main())', async () => {
    const r = await run(
      [
        'import asyncio',
        'async def main():',
        '    return await asyncio.gather(slow("a"), slow("b"), slow("c"))',
        'asyncio.run(main())',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.deepEqual(r.result, ['A', 'B', 'C'])
    assert.deepEqual(tools.log, ['slow:a', 'slow:b', 'slow:c'])
    assert.equal(tools.peak, 3, 'the three calls were in flight at once')
  })

  test("the runtime's gather, coroutines that await tools, and tasks, inside asyncio.run", async () => {
    const r = await run(
      [
        'import asyncio',
        'async def fetch(q):',
        '    first = await slow(q)',
        '    return first + "!"',
        'async def main():',
        '    both = await gather(fetch("x"), fetch("y"))',
        '    tasks = [asyncio.create_task(fetch(q)) for q in ("t1", "t2")]',
        '    done = [await t for t in tasks]',
        '    waited = await asyncio.wait_for(slow("w"), 30)',
        '    return both, done, waited',
        'asyncio.run(main())',
      ].join('\n'),
    )
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.deepEqual(r.result, [['X!', 'Y!'], ['T1!', 'T2!'], 'W'])
    assert.equal(tools.peak, 2, 'each pair ran side by side')
    assert.deepEqual(tools.log.sort(), ['slow:t1', 'slow:t2', 'slow:w', 'slow:x', 'slow:y'])
  })

  test('a tool that fails inside asyncio.gather raises its own error there; the others still ran', async () => {
    const r = await run(
      [
        'import asyncio',
        'async def main():',
        '    try:',
        '        await asyncio.gather(slow("ok"), fail("inside"))',
        '    except Exception as e:',
        '        return f"{type(e).__name__}: {e}"',
        'asyncio.run(main())',
      ].join('\n'),
    )
    assert.equal(r.result, 'ToolError: fail: boom in inside')
    assert.deepEqual(tools.log.sort(), ['fail:inside', 'slow:ok'])
    const uncaught = await run(
      'import asyncio\nasync def main():\n    return await asyncio.gather(fail("up"))\nasyncio.run(main())',
    )
    assert.equal(uncaught.error?.phase, 'host')
    assert.match(uncaught.error?.message ?? '', /tool fail failed: boom in up/)
  })

  test('a call touched as data inside a coroutine, and one awaited after another await', async () => {
    const r = await run(
      [
        'import asyncio',
        'async def main():',
        '    d = slow("later")',
        '    await asyncio.sleep(0)',
        '    n = len(await slow("now"))',
        '    return (await d), n',
        'asyncio.run(main())',
      ].join('\n'),
    )
    assert.deepEqual(r.result, ['LATER', 3])
  })

  test('an interrupt while asyncio.run waits on tools ends the block; the session goes on', async () => {
    const r = await run(
      'import asyncio\nasync def main():\n    return await asyncio.gather(hang(), slow("z"))\nasyncio.run(main())',
      1500,
    )
    assert.equal(r.timedOut, true)
    assert.equal(r.workerReplaced, undefined, 'the interrupt landed: no kill')
    assert.equal(r.error?.phase, 'timeout')
    const next = await run(
      'import asyncio\nasync def main():\n    return await slow("after")\nasyncio.run(main())',
    )
    assert.equal(next.result, 'AFTER')
  })
})
