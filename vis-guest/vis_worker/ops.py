"""Work ops of the worker wire, served on the interpreter thread.

In wire mode the addon's reader thread hands each work request line straight to
`handle`, and writes the reply line it returns to the socket: no trip through the
worker's JavaScript. Every reply carries the request's id; a failure is a reply with
ok false, never an exception out of here (the addon would have to invent one)."""

import importlib
import json
import sys
import traceback

from _vis import json_quote as _json_quote

from . import stdin as _stdin

# The block's input comes from the host's `stdin` requests (see stdin.py).
_stdin.install()


def _main() -> dict:
    # Looked up per call: the guest runtime may install its own __main__.
    return sys.modules["__main__"].__dict__


def _error(exc: BaseException) -> dict:
    err = {"type": type(exc).__name__, "message": str(exc)}
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if f.filename == "<block>"]
    if isinstance(exc, SyntaxError) and exc.filename == "<block>":
        err["line"] = exc.lineno
        if exc.offset:
            err["column"] = exc.offset
    elif frames:
        err["line"] = frames[-1].lineno
    return err


def _exec(msg: dict):
    try:
        exec(compile(msg["code"], "<block>", "exec"), _main())
    except BaseException as e:  # noqa: BLE001 - an interrupt is an outcome, not a crash
        return {"ok": False, "error": _error(e)}
    return {"ok": True, "value": None}


def _eval(msg: dict):
    try:
        value = eval(compile(msg["expr"], "<block>", "eval"), _main())
    except BaseException as e:  # noqa: BLE001
        return {"ok": False, "error": _error(e)}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"ok": True, "value": repr(value), "repr": True}
    return {"ok": True, "value": value}


def _run(msg: dict):
    fn = getattr(importlib.import_module(msg["module"]), msg["fn"])
    return fn(*msg["args"])


def _guest(name: str, key: str):
    def op(msg: dict):
        from vis_guest import api

        return getattr(api, name)(msg[key])

    return op


# The run-block request's fields: src/protocol/run-block.ts RunBlockRequest is their one
# definition (test/protocol/guest-wire.test.ts compares this set, and what the guest reads,
# with it). A field outside it is a host bug (an old name, a typo) that would otherwise be
# dropped without a word: it is refused, naming the field.
RUN_BLOCK_FIELDS = frozenset(("code", "session", "stdout_cap", "stdin"))


class WireRefused(Exception):
    """A request outside the wire's contract: answered with a protocol error, not a Python one."""

    code = "protocol.invalid"


def _run_block(msg: dict):
    request = msg["request"]
    if not RUN_BLOCK_FIELDS.issuperset(request):
        unknown = ", ".join(sorted(set(request) - RUN_BLOCK_FIELDS))
        known = ", ".join(sorted(RUN_BLOCK_FIELDS))
        raise WireRefused(f"invalid run-block request: unknown field(s) {unknown}; its fields are {known}")
    if "stdin" in request:
        _stdin.preload(request.pop("stdin"))
    from vis_guest import api

    return api.run_block(request)


OPS = {
    "exec": _exec,
    "eval": _eval,
    "run": _run,
    "run-block": _run_block,
    "install-tool": _guest("install_tool", "spec"),
    "install-runtime": _guest("install_runtime", "config"),
}


# One encoder for every reply: json.dumps with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_loads = json.loads


def _encode_value(value) -> str:
    # The C encoder walks a str one character at a time (~130 us for 64 KiB); the
    # addon's quoting scans it 16 bytes at a time. A str with lone surrogates has no
    # UTF-8 form: the encoder writes it as Python would, and the wire replaces them.
    if type(value) is str and len(value) >= 512:
        try:
            return _json_quote(value)
        except UnicodeEncodeError:
            pass
    return _encode(value)


def _forget_reported() -> None:
    from vis_guest.state import RT

    RT.forget_reported()


def handle(line: str) -> str:
    rid = op = None
    try:
        msg = _loads(line)
        rid = msg["id"]
        op = msg["op"]
        value = OPS[op](msg)
        if value is None:
            return f'{{"id":{rid:d},"ok":true,"value":null}}'
        if type(value) is dict and not value:  # a block that printed and changed nothing
            return f'{{"id":{rid:d},"ok":true,"value":{{}}}}'
        return f'{{"id":{rid:d},"ok":true,"value":{_encode_value(value)}}}'
    except BaseException as e:  # noqa: BLE001 - KeyboardInterrupt in `run` too
        return _failed(line, rid, op, e)


def _interrupted_block(exc: KeyboardInterrupt, request: dict) -> dict:
    from vis_guest import api

    return api.interrupted_block(exc, request)


def _failed(line: str, rid, op, exc: BaseException) -> str:
    """The reply to a request that raised.

    An interrupt sent right behind its block lands wherever the interpreter thread is: before
    this module has read the request's id, or after the block's outcome was built. A run-block
    then still answers, with its id, as an interrupted block does (the host would otherwise
    get a reply it cannot match, and replace the worker). A further interrupt landing while
    this reply is built starts it over; each one lands once."""
    for _ in range(8):
        try:
            if rid is None or op is None:
                msg = _loads(line)
                rid, op = msg["id"], msg["op"]
            if op == "run-block":
                _forget_reported()  # its reply (the state it reported) never reaches the host
                if isinstance(exc, KeyboardInterrupt):
                    value = _interrupted_block(exc, _loads(line)["request"])
                    return f'{{"id":{rid:d},"ok":true,"value":{_encode_value(value)}}}'
            if isinstance(exc, WireRefused):
                code, message = exc.code, str(exc)
            else:
                code = "python.interrupted" if isinstance(exc, KeyboardInterrupt) else "python.exception"
                message = f"{type(exc).__name__}: {exc}"
            return _encode({"id": rid, "ok": False, "error": {"code": code, "message": message}})
        except KeyboardInterrupt:
            continue
        except Exception:  # noqa: BLE001 - a request that cannot be read has no id to answer
            break
    return _encode({"id": rid, "ok": False, "error": {"code": "python.exception", "message": repr(exc)}})
