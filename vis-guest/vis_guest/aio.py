"""asyncio at block level, where no event loop runs (so that asyncio.run() stays usable).

Two asyncio calls models write at top level are routed to the block's own scheduler when no
loop is running: asyncio.sleep(delay) sleeps in place, and asyncio.gather(...) becomes the
runtime's gather (same concurrency for tool calls; failures aggregate). Under a running
loop (inside asyncio.run) both are asyncio's own. asyncio.run(main()) also takes the call of
a plain def the rewrite promoted to async def (a DeferredRun): it runs its coroutine.
Installed when asyncio is first imported (lazy.py), not before."""

import time

from .deferred import DeferredRun, _running_loop
from .lazy import when_imported
from .schedule import gather as vis_gather


def install() -> None:
    when_imported("asyncio", _patch)


def _patch(asyncio) -> None:
    loop_sleep = asyncio.sleep
    loop_gather = asyncio.gather
    loop_run = asyncio.run

    async def sleep(delay, result=None):
        if _running_loop() or delay <= 0:
            return await loop_sleep(delay, result)
        time.sleep(delay)  # interruptible, like any blocking call in a block
        return result

    def gather(*aws, return_exceptions=False):
        if _running_loop():
            return loop_gather(*aws, return_exceptions=return_exceptions)
        return vis_gather(*aws, return_exceptions=return_exceptions)

    def run(main, **kwargs):
        if isinstance(main, DeferredRun) and main._state == 0:
            main._state = 3  # running: it is asyncio's to finish now
            main = main._coro
        return loop_run(main, **kwargs)

    sleep.__doc__ = loop_sleep.__doc__
    gather.__doc__ = loop_gather.__doc__
    run.__doc__ = loop_run.__doc__
    asyncio.sleep = asyncio.tasks.sleep = sleep
    asyncio.gather = asyncio.tasks.gather = gather
    asyncio.run = asyncio.runners.run = run
