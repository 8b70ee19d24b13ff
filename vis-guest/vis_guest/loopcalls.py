"""Tool calls awaited under asyncio's loop (inside asyncio.run), still concurrent.

The loop cannot wait for a host reply (it has no file descriptor to select on), so each
awaited call is sent at once, then passes the turn once (asyncio.sleep(0)) so that sibling
tasks (asyncio.gather, create_task) send theirs; the first to resume waits for ANY call in
flight and stores each reply on its call, until its own is in. `asyncio.gather(cat(a),
cat(b))` then costs one round trip instead of two. Calls are kept per job, so an id from
an earlier block (a loop kept across blocks) is never waited for."""

import _vis

from . import wire

SENT = 4  # a DeferredCall's state once sent here and not yet answered (deferred.py)

inflight: dict = {}  # call id -> (job, DeferredCall)


def run(call):
    """DeferredCall.__await__ under a running asyncio loop."""
    import asyncio

    try:
        call_id = wire.send(call._tool, call._args)
    except Exception as e:  # noqa: BLE001 - refused before sending: raised where awaited
        call._fail(e)
        return call._outcome()
    call._state = SENT
    inflight[call_id] = (_vis.current_job(), call)
    yield from asyncio.sleep(0).__await__()
    finish(call)
    return call._outcome()


def finish(call) -> None:
    """Wait until `call` has its reply, storing every reply that comes first on its own call."""
    job = _vis.current_job()
    for cid in [c for c, (j, _) in inflight.items() if j != job]:
        inflight.pop(cid)[1]._fail(RuntimeError("the block that sent this tool call has ended"))
    while call._state == SENT:
        ids = list(inflight)
        try:
            cid, reply = wire.wait(ids)
        except BaseException as e:
            # An interrupt cancels every call it waited for: none of them will be answered,
            # and each task awaiting one gets the same end.
            for c in ids:
                entry = inflight.pop(c, None)
                if entry is not None:
                    entry[1]._fail(e)
            raise
        entry = inflight.pop(cid, None)
        if entry is not None:
            entry[1]._complete(reply)
