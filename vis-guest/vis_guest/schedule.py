"""Drives coroutines without an asyncio loop, so `asyncio.run()` still works inside a block.

Children run until they yield a DeferredCall; every such call is sent to the host at once
(host_send), and children resume as replies arrive (host_wait). One scheduler drives the
whole block; gather() runs its own for its children."""

import collections
import inspect

from . import wire
from .deferred import DeferredCall, _running_loop

NO_LOOP = (
    "this awaits an asyncio future, but a block runs without an event loop: use gather() for "
    "concurrency, or put the asyncio code in `async def main()` and call asyncio.run(main())"
)


class GatherError(Exception):
    """Several awaitables of one gather() failed; `.exceptions` holds them by index."""

    def __init__(self, message: str, failures: list):
        super().__init__(message)
        self.exceptions = failures


def _start(aw):
    if isinstance(aw, DeferredCall) or inspect.isawaitable(aw):
        return aw.__await__()
    return None


def run_all(aws: list) -> list:
    """Run every awaitable to completion; returns [(ok, value_or_exception)] in order."""
    n = len(aws)
    out: list = [None] * n
    steps = []
    ready = collections.deque()
    for i, aw in enumerate(aws):
        it = _start(aw)
        steps.append(it)
        if it is None:
            out[i] = (True, aw)  # a plain value is its own result
        else:
            ready.append((i, None))
    inflight: dict = {}  # call id -> DeferredCall
    waiters: dict = {}  # id(DeferredCall) -> [child index]
    while ready or inflight:
        while ready:
            i, throw = ready.popleft()
            try:
                got = steps[i].send(None) if throw is None else steps[i].throw(throw)
            except StopIteration as stop:
                out[i] = (True, stop.value)
                continue
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - every child's failure is reported
                out[i] = (False, e)
                continue
            if isinstance(got, DeferredCall) and got._state == 0:
                key = id(got)
                if key not in waiters:
                    try:
                        call_id = wire.send(got._tool, got._args)
                    except Exception as e:  # noqa: BLE001 - refused before sending: the awaiting child gets it
                        got._fail(e)
                        ready.append((i, None))
                        continue
                    waiters[key] = []
                    inflight[call_id] = got
                waiters[key].append(i)
            elif got is None or isinstance(got, DeferredCall):
                ready.append((i, None))  # a bare yield (asyncio.sleep(0)) just passes the turn
            else:
                # An asyncio future with no loop to complete it: fail loudly instead of spinning.
                ready.append((i, RuntimeError(NO_LOOP)))
        if inflight:
            call_id, reply = wire.wait(list(inflight))
            call = inflight.pop(call_id)
            call._complete(reply)
            ready.extend((i, None) for i in waiters.pop(id(call)))
    return out


def drive(coro):
    """Run the block's coroutine; its exception propagates with its own traceback."""
    ((ok, value),) = run_all([coro])
    if ok:
        return value
    try:
        raise value.with_traceback(value.__traceback__)
    finally:
        value = None


def _describe(e: BaseException) -> str:
    if isinstance(e, wire.ToolError):
        return str(e)
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class _Gather:
    __slots__ = ("aws", "return_exceptions")

    def __init__(self, aws, return_exceptions):
        self.aws = aws
        self.return_exceptions = return_exceptions

    def __await__(self):
        if _running_loop():
            import asyncio

            wrapped = [_as_coroutine(a) for a in self.aws]
            results = yield from asyncio.gather(*wrapped, return_exceptions=True).__await__()
            pairs = [(not isinstance(r, BaseException), r) for r in results]
        else:
            pairs = run_all(self.aws)
        if self.return_exceptions:
            return [v for _, v in pairs]
        failures = [(i, v) for i, (ok, v) in enumerate(pairs) if not ok]
        if failures:
            detail = "; ".join(f"[{i}] {_describe(e)}" for i, e in failures)
            raise GatherError(
                f"gather: {len(failures)}/{len(pairs)} awaitables failed \u2014 {detail}", [e for _, e in failures]
            )
        return [v for _, v in pairs]


async def _as_coroutine(aw):
    # A tool call is awaited like any awaitable: under asyncio's loop it still runs beside its
    # siblings (loopcalls.py).
    if isinstance(aw, DeferredCall) or inspect.isawaitable(aw):
        return await aw
    return aw


def gather(*aws, return_exceptions: bool = False):
    """Run awaitables (tool calls, coroutines) concurrently; all run to completion.

    Failures aggregate into one error; return_exceptions=True returns them in place."""
    return _Gather(list(aws), return_exceptions)


gather.__module__ = "builtins"
