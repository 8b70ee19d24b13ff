"""Snapshots of the session's own definitions: functions, classes, imports and small literal
constants, as source, so a fresh process can rebuild them through the block rewrite."""

import ast
import inspect
import textwrap
import types

from . import rewrite
from .state import SYSTEM_VAR_NAMES

_SYSTEM = frozenset(SYSTEM_VAR_NAMES)

VERSION = 1
MAX_CONST_REPR = 2000  # a constant bigger than this is data, not a definition
MAX_TOTAL = 256 * 1024
_CONST_TYPES = (int, float, str, bool, type(None), bytes, list, tuple, dict, set, frozenset)


def _source(node: ast.AST, source: str) -> str | None:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    lines = source.splitlines()
    end = node.end_lineno or node.lineno
    seg = lines[first - 1 : end]
    if not seg:
        return None
    return textwrap.dedent("\n".join(seg))


def candidates(tree: ast.Module, source: str) -> list:
    """(name, kind, source) for every module-level def/class/import in a block."""
    out = []
    for node in rewrite.module_level(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            src = _source(node, source)
            if src:
                out.append((node.name, kind, src))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                out.append((bound, "import", text))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name == "*":
                    continue
                one = ast.ImportFrom(module=node.module, names=[alias], level=node.level)
                out.append((alias.asname or alias.name, "import", ast.unparse(one)))
    return out


def record(rt, found: list, before: dict) -> None:
    """Keep the definitions the block actually (re)bound."""
    g = rt.globals
    for name, kind, src in found:
        if name not in g or name in rt.tools:
            continue
        value = g[name]
        if kind != "import" and (value is before.get(name, _MISSING)):
            continue
        if kind == "function" and not inspect.isfunction(value):
            continue
        if kind == "class" and not inspect.isclass(value):
            continue
        rt.registry.pop(name, None)  # re-definition moves to the end: later defs may use earlier ones
        rt.registry[name] = {"kind": kind, "source": src}


_MISSING = object()


def _literal(value) -> str | None:
    if not isinstance(value, _CONST_TYPES) or isinstance(value, type):
        return None
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        return None
    if len(text) > MAX_CONST_REPR:
        return None
    if isinstance(value, (bool, int, str, type(None))):
        return text
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return text  # repr of these is always a literal that reads back equal
    try:
        if ast.literal_eval(text) != value:
            return None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text


# Values whose repr is a function of the object alone (immutable, no contents to mutate): a
# name still bound to the same such object keeps the text computed for it last time.
_SCALARS = frozenset((int, float, str, bool, type(None), bytes))


def entries(rt) -> list:
    """(name, kind, source) of the session's definitions now, in restore order and capped.

    Called after every block, so the constants' texts are remembered per name (see _SCALARS):
    a block that rebinds nothing costs a walk of the globals, not a repr of each value."""
    g = rt.globals
    tools = rt.tools
    registry = rt.registry
    items = []
    for name in list(registry) if registry else ():
        entry = registry[name]
        if name not in g or name in tools:
            del registry[name]
            continue
        value = g[name]
        if entry["kind"] == "function" and not inspect.isfunction(value):
            del registry[name]
            continue
        if entry["kind"] == "class" and not inspect.isclass(value):
            del registry[name]
            continue
        items.append((name, entry["kind"], entry["source"]))
    known = rt.const_texts
    texts = {}
    consts = []
    volatile = False  # a value whose text can change while the name holds the same object
    for name, value in g.items():
        if name in registry or name in tools or name in _SYSTEM or name.startswith("__"):
            continue
        seen = known.get(name)
        if seen is not None and seen[0] is value:
            item = seen[1]  # only scalars are remembered
        elif isinstance(value, (types.ModuleType, types.FunctionType)):
            continue
        else:
            text = _literal(value)
            item = None if text is None else (name, "const", f"{name} = {text}")
        if type(value) in _SCALARS:
            texts[name] = (value, item)
        elif isinstance(value, _CONST_TYPES):
            volatile = True  # a list, a dict, a tuple of them, an int subclass with its own repr
        if item is not None:
            consts.append(item)
    rt.const_texts = texts  # only names bound now: nothing stale is kept alive
    rt.snapshot_volatile = volatile
    imports = [i for i in items if i[1] == "import"]
    rest = [i for i in items if i[1] != "import"]
    total = 0
    kept = []
    for item in imports + consts + rest:
        total += len(item[2])
        if total > MAX_TOTAL and item[1] == "const":
            continue
        kept.append(item)
    return kept


def as_snapshot(kept: list) -> dict:
    return {"version": VERSION, "items": [{"name": n, "kind": k, "source": s} for n, k, s in kept]}


def take(rt) -> dict:
    return as_snapshot(entries(rt))


def changed(rt) -> dict | None:
    """The snapshot when it differs from the last one this worker reported, else None.

    The host keeps the last snapshot it was given (src/sessions/session.ts), so an unchanged
    one need not cross again; a fresh worker has reported none and sends its first."""
    kept = entries(rt)
    if kept == rt.reported["defs"]:
        return None
    rt.reported["defs"] = kept
    return as_snapshot(kept)


def parse(snapshot) -> list:
    """Validated items; raises ValueError when any part of the snapshot is unusable."""
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("items"), list):
        raise ValueError("a snapshot is {version, items: [...]}")
    out = []
    for item in snapshot["items"]:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("name", "source")):
            raise ValueError("every snapshot item needs a name and a source")
        tree = ast.parse(item["source"], "<snapshot>", "exec")
        out.append((item["name"], item.get("kind", "function"), item["source"], tree))
    return out
