"""The host door: tool calls cross as JSON through the native `_vis` module."""

import json
import os

import _vis


class ToolError(Exception):
    """A host tool failed; carries the host's message so `except Exception` can read it."""

    def __init__(self, tool: str, message: str, code: str | None = None):
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.code = code
        self.host_message = message


class ResultKeyError(KeyError):
    """A missing key in a tool result: names the real keys so the next try is informed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "KeyError"


class ResultDict(dict):
    def __getattr__(self, name):
        # Only reached when the attribute does not exist: `r.text` for r["text"] is the common
        # slip (results read like objects elsewhere); say how to read it, and keep hasattr() False.
        head = f"{type(self).__name__!r} object has no attribute {name!r}"
        if name.startswith("_"):
            raise AttributeError(head)
        if name in self:
            raise AttributeError(f"{head}: a tool result is a dict, read it as [{name!r}]")
        raise AttributeError(f"{head}: a tool result is a dict; its keys are {list(self.keys())!r}")

    def __missing__(self, key):
        import difflib

        keys = [k for k in self.keys()]
        msg = f"{key!r} is not in this result; its keys are {keys!r}"
        close = difflib.get_close_matches(str(key), [str(k) for k in keys], n=1)
        if close:
            msg += f"; did you mean {close[0]!r}?"
        raise ResultKeyError(msg)


# The largest integer the host keeps exactly (its JSON numbers are doubles).
SAFE_INT = 2**53 - 1


def exact_number(value) -> bool:
    """Whether an int or float crosses to the host as the same number (not rounded, not NaN)."""
    if isinstance(value, int):
        return -SAFE_INT <= value <= SAFE_INT
    return value == value and value not in (float("inf"), float("-inf"))


def _to_wire(value, path: str):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if exact_number(value):
            return value
        raise TypeError(
            f"argument {path} is an integer past ±(2**53 - 1), which the host's JSON numbers cannot hold "
            "exactly; pass it as a string (str(n))"
        )
    if isinstance(value, float):
        if exact_number(value):
            return value
        raise TypeError(f"argument {path} is {value!r}, which JSON cannot carry; pass None or a string")
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                where = path or "the top level"
                raise TypeError(f"key {k!r} at {where} is not a string; only JSON crosses to the host")
            out[k] = _to_wire(v, f"{path}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_to_wire(v, f"{path}[{i}]") for i, v in enumerate(value)]
    from .deferred import DeferredCall

    if isinstance(value, DeferredCall):
        return _to_wire(value._settle(), path)
    raise TypeError(f"argument {path} is a {type(value).__name__}, which cannot cross to the host (JSON data only)")


def encode_args(tool: str, args: list) -> str:
    try:
        return json.dumps([_to_wire(a, f"[{i}]") for i, a in enumerate(args)], ensure_ascii=False)
    except TypeError as e:
        raise TypeError(f"{tool}: {e}") from None


def decode_reply(tool: str, reply_json: str):
    reply = json.loads(reply_json, object_hook=ResultDict)
    if reply.get("ok"):
        return reply.get("value")
    err = reply.get("error") or {}
    raise ToolError(tool, str(err.get("message", "the tool failed")), err.get("code"))


def call(tool: str, args: list):
    return decode_reply(tool, _vis.host_call(tool, encode_args(tool, args)))


def send(tool: str, args: list) -> int:
    return _vis.host_send(tool, encode_args(tool, args))


def wait(ids: list) -> tuple:
    return _vis.host_wait(ids)
