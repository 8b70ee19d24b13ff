"""A small durable key-value store per extension, kept by the host in its database."""

import json

_current = [None]


def _set_current(name):
    """The loader names the extension whose code is about to run."""
    prev = _current[0]
    _current[0] = name
    return prev


def _host(op, *args):
    import _vis

    name = _current[0]
    if name is None:
        raise RuntimeError("vis.state is only available while an extension's code runs")
    reply = json.loads(_vis.host_call("vis.kv", json.dumps([name, op, *args])))
    if not reply.get("ok"):
        err = reply.get("error") or {}
        raise RuntimeError(f"vis.state.{op}: {err.get('message', 'failed')}")
    return reply.get("value")


class _State:
    """``vis.state.get(key, default)``, ``.set(key, value)``, ``.delete(key)``, ``.keys()``.

    Values are JSON (strings, numbers, booleans, None, lists, dicts with string keys)."""

    def get(self, key, default=None):
        found = _host("get", key)
        return found["value"] if found.get("found") else default

    def set(self, key, value):
        _host("set", key, value)

    def delete(self, key):
        return bool(_host("delete", key))

    def keys(self):
        return list(_host("keys"))


state = _State()
