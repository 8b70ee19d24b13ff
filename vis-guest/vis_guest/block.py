"""Running one block: parse, refuse what must not run, rewrite, drive, report."""

import ast
import inspect
import linecache
import operator
import os
import sys

from . import attach, banned, errors, plots, rewrite, schedule, snapshot
from .capture import DEFAULT_CAP, Capture, Tee
from .codecache import CodeCache, watching_warnings
from .deferred import settle_return
from .state import RT, SYSTEM_VAR_NAMES, _dict_version
from .wire import exact_number

_MISSING = object()

EMPTY_MESSAGE = (
    "nothing to execute: the block has no statements (only comments, whitespace or imports of "
    "gather). Write the code to run, and print() what you want to see."
)


class Refused(Exception):
    def __init__(self, err: dict):
        super().__init__(err.get("message"))
        self.err = err


def _is_empty(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "asyncio":
            if all(a.name == "gather" for a in node.names):
                continue
        return False
    return True


def _located(err: dict, source: str, line: int | None, col: int | None) -> dict:
    lines = source.splitlines()
    if line and 0 < line <= len(lines):
        err["line"] = line
        if col:
            err["column"] = col
        err["excerpt"] = errors.excerpt(lines, line, col, None)
    return err


def _tool_named_defs(tree: ast.Module, source: str) -> None:
    for node in rewrite.module_level(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in RT.tools:
            word = "class" if isinstance(node, ast.ClassDef) else "def"
            n = node.name
            err = {
                "phase": "syntax",
                "message": f"`{word} {n}` would replace the tool {n}; name yours {n}_mine instead "
                f"(the tool {n} stays available).",
                "flags": ["tool-name"],
            }
            raise Refused(_located(err, source, node.lineno, node.col_offset + 1))


_CODE = CodeCache()


def prepare_block(source: str, filename: str):
    """prepare() for a block the model sent: a text run before comes from the code cache.
    The code's co_filename is the block's filename (a cached one keeps its first)."""
    hit = _CODE.get(source)
    if hit is not None:
        return hit
    # Watched from the parse on: the parser warns too (an invalid escape sequence).
    (code, found), warned = watching_warnings(lambda: prepare(source, filename, capture_last=True, check=True))
    _CODE.put(source, code, found, warned)
    return code, found


def code_cache_stats() -> dict:
    return {"entries": len(_CODE.entries), "hits": _CODE.hits}


def prepare(source: str, filename: str, *, capture_last: bool, check: bool):
    """Parse + refuse + rewrite + compile; raises Refused with a ready error."""
    try:
        tree = ast.parse(source, filename, "exec")
    except SyntaxError as e:
        raise Refused(_error(e, True, filename, source)) from None
    if check:
        if _is_empty(tree):
            raise Refused({"phase": "empty-block", "message": EMPTY_MESSAGE})
        bad = banned.check(tree) if banned.may_contain(source) else None
        if bad:
            err = {"phase": "syntax", "message": bad["message"], "flags": ["banned"]}
            raise Refused(_located(err, source, bad["line"], bad["column"]))
        _tool_named_defs(tree, source)
    found = snapshot.candidates(tree, source)
    try:
        code = rewrite.compile_block(*rewrite.rewrite(tree, capture_last, source), filename, source)
    except SyntaxError as e:
        raise Refused(_error(e, True, filename, source)) from None
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return code, found


def _clean_exit(exc: BaseException) -> bool:
    """sys.exit(0), sys.exit(), exit(), quit(): python3 ends with status 0, a success, and says
    nothing. The block ends there as a success (what it printed stays; the session goes on);
    any other status is the block's error, as python3's non-zero exit is a failure."""
    if not isinstance(exc, SystemExit):
        return False
    code = exc.code
    return code is None or (isinstance(code, int) and code == 0)


def _note_lost(rt, survived) -> None:
    """The first block on a replacement worker carries what the kill lost."""
    if isinstance(survived, dict) and survived.get("worker_replaced"):
        cause = survived.get("cause") if isinstance(survived.get("cause"), str) else "a kill"
        for name in survived.get("lost") or ():
            if isinstance(name, str):
                rt.lost[name] = cause


def _error(exc: BaseException, syntax: bool, filename: str, source: str) -> dict:
    cfg = RT.config
    return errors.build(
        exc,
        syntax=syntax,
        filename=filename,
        source=source,
        removed=RT.removed,
        lost=RT.lost,
        policy=cfg.get("policy") or {},
        tool_hints=cfg.get("tool_hints") or {},
    )


def interrupted(exc: KeyboardInterrupt, request: dict) -> dict:
    """The outcome of a block interrupted outside its own code (api.run_block)."""
    RT.restore()
    return {"error": _error(exc, False, "<block>", request.get("code") or "")}


def execute(code) -> None:
    value = eval(code, RT.globals)  # noqa: S307 - this IS the sandboxed block
    if code.co_flags & inspect.CO_COROUTINE:
        schedule.drive(value)


def _plain(value, depth=0):
    if value is None or isinstance(value, (bool, str)):
        return value
    # A number the host would round (2**64) or could not hold (10**400 became null, nan): its repr.
    if isinstance(value, (int, float)):
        return value if exact_number(value) else repr(value)
    if depth < 50 and isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if depth < 50 and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    return repr(value)


def run(request: dict) -> dict:
    rt = RT
    source = request.get("code") or ""
    cap = request.get("stdout_cap") or rt.config.get("stdout_cap") or DEFAULT_CAP
    rt.restore()
    g = rt.globals
    # The globals' version before and after the runtime's own `session` rebinding: if it is
    # the one the last report left and the block changes nothing, the state is unchanged.
    untouched = _dict_version(g)
    untouched = untouched is not None and untouched == rt.reported.get("globals")
    g["session"] = dict(request.get("session") or {})
    _note_lost(rt, g["session"].get("survived"))
    start = _dict_version(g)
    rt.last_value = None
    rt.attachments = []
    rt.notes = []
    rt.block_no += 1
    filename = f"<vis-block-{rt.block_no}>"
    capture = Capture(int(cap))
    err = None
    try:
        code, found = prepare_block(source, filename)
    except Refused as r:
        err = r.err
    else:
        filename = code.co_filename
        before = {name: rt.globals.get(name, _MISSING) for name, _, _ in found}
        sys.stdout = Tee(rt.stdout, capture)
        sys.stderr = Tee(rt.stderr, capture)
        try:
            execute(code)
        except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt end the block, not the worker
            if not _clean_exit(e):
                err = _error(e, False, filename, source)
            e = None
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    pass
            rt.restore()
        snapshot.record(rt, found, before)
        if rt.lost:
            for name in [n for n in rt.lost if n in g]:  # made again: a later NameError is the code's own
                del rt.lost[name]
        plots.flush(rt)  # figures left open become the block's pictures
    outcome: dict = {}
    text = capture.text()
    if rt.notes:
        text += "".join(f"[vis: {n}]\n" for n in rt.notes)
    errors.loop_breaker(rt, err)
    if err is not None:
        outcome["error"] = err
        if text:
            outcome["stdout"] = text
    elif text:
        outcome["stdout"] = text
        if rt.last_value is not None:
            # Printed AND ended in an expression: the value goes beside the output, as a notebook
            # shows it under the cell's prints, for what the model reads (the agent's and MCP's
            # renderings). `result` stays empty: it is the value of a block that printed nothing.
            outcome["value"] = _plain(rt.last_value)
    elif rt.last_value is not None:
        outcome["result"] = _plain(rt.last_value)
    files = rt.attachments + attach.collect(rt)
    rt.attachments = []
    rt.last_value = None
    if files:
        outcome["attachments"] = files
    _report_changes(rt, outcome, untouched and _dict_version(g) == start)
    return outcome


def _report_changes(rt, outcome: dict, untouched: bool) -> None:
    """The session's state the host keeps, each only when it changed since this worker last
    reported it (the host keeps the last one it got): the defs snapshot (a replacement worker
    restores it); the session's own names (after an interrupt, what survived intact; after a
    kill, what a restore is compared against); the working directory (where a replacement
    starts). A trivial block then answers with a few bytes instead of all of them."""
    reported = rt.reported
    tools = list(rt.tools)
    registry = list(rt.registry.values())  # record() stores a new entry for every change
    if not (
        untouched
        and not rt.snapshot_volatile
        and tools == reported.get("tools")
        and len(registry) == len(reported.get("registry", ()))
        and all(map(operator.is_, registry, reported["registry"]))
    ):
        # Something may have changed: compute and compare (no globals rebound since the last
        # report, none that can change in place, same tools and registry: nothing could).
        snap = snapshot.changed(rt)
        if snap is not None:
            outcome["snapshot"] = snap
        keys = list(rt.globals)  # the names are a function of the keys: compare those, in C
        if keys != reported["names"]:
            reported["names"] = keys
            outcome["names"] = user_names(rt)
        reported["tools"] = tools
        reported["registry"] = list(rt.registry.values())
    reported["globals"] = _dict_version(rt.globals)
    try:
        cwd = os.getcwd()
    except OSError:
        return
    if cwd != reported["cwd"]:
        reported["cwd"] = cwd
        outcome["cwd"] = cwd


def user_names(rt) -> list:
    return [n for n in rt.globals if n not in SYSTEM_VAR_NAMES and not (n.startswith("__") and n.endswith("__"))]


def last(value):
    # The block's last expression is what it hands back, as `return` does for a function:
    # `[cat(p) for p in ps]` or `{k: size(k) for k in ks}` there means the data, so the calls
    # one or two container levels deep run together (a list kept in a name is settled in place).
    value = settle_return(value)
    RT.last_value = value
    return value


def unshadow() -> None:
    for name in RT.tools:
        RT.globals.pop(name, None)


def restore_defs(snap) -> dict:
    """Rebuild definitions from a snapshot, each on its own: what loads, stays."""
    rt = RT
    rt.restore()
    try:
        items = snapshot.parse(snap)
    except (ValueError, SyntaxError) as e:
        return {"restored": [], "skipped": [], "failed": [], "error": f"unusable snapshot, nothing restored: {e}"}
    restored, skipped, failed = [], [], []
    for name, _kind, source, _tree in items:
        if name in rt.tools:
            skipped.append(name)
            continue
        rt.block_no += 1
        filename = f"<vis-block-{rt.block_no}>"
        try:
            code, found = prepare(source, filename, capture_last=False, check=False)
            before = {n: rt.globals.get(n, _MISSING) for n, _, _ in found}
            execute(code)
            snapshot.record(rt, found, before)
            restored.append(name)
        except Refused as r:
            failed.append({"name": name, "error": r.err.get("message")})
        except Exception as e:  # noqa: BLE001 - one bad definition must not stop the rest
            failed.append({"name": name, "error": f"{type(e).__name__}: {e}"})
        finally:
            rt.restore()
    return {"restored": restored, "skipped": skipped, "failed": failed}
