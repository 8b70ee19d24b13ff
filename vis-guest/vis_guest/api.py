"""The worker's entry points: each takes JSON arguments and returns JSON data.

The worker calls `fn(*json.loads(args_json))` and json.dumps what comes back."""

import ast
import builtins
import os
import sys

from . import (
    aio,
    attach,
    autoimport,
    banned,
    block,
    deferred,
    helpers,
    lazy,
    paths,
    pkgenv,
    probe,
    reserve,
    schedule,
    signals,
    snapshot,
    surface,
    tools,
    touches,
    wire,
)
from . import live_state as session_state
from .state import RT, SYSTEM_VAR_NAMES


def _route_sockets() -> None:
    # net.py imports socket and what it pulls in (~1 MB): only a worker whose network is on
    # (its egress relay's port set at spawn) loads it. The network is never loosened later.
    if os.environ.get("VIS_EGRESS_PORT"):
        from . import net

        net.install()


def install_runtime(config: dict) -> dict:
    """Config: {policy: {roots, network, shell}, process_surface: {shell_on, shell_off} | str,
    tool_hints: {files?, network?, serve?}, outbox: dir, stdout_cap: bytes,
    sys_path: [dir, ...] (the project's import roots, put first on sys.path)}.

    Calling it again merges the given keys into the config (the first call installs)."""
    rt = RT
    rt.config.update(config or {})
    if not rt.installed:
        rt.stdout, rt.stderr = sys.stdout, sys.stderr
        surface.install(rt)
        signals.install(rt)
        reserve.install()
        aio.install()
        lazy.when_imported("json", touches.settle_in_json)
        lazy.when_imported("pprint", touches.settle_in_pprint)
        _route_sockets()
        autoimport.install(rt)
        hooks = {
            "__vis_settle__": deferred.settle,
            "__vis_await__": deferred.awaitable,
            "__vis_asettle__": deferred.asettle,
            "__vis_return__": deferred.settle_return,
            "__vis_promoted__": deferred.promoted,
            "__vis_last__": block.last,
            "__vis_unshadow__": block.unshadow,
            "gather": schedule.gather,
            "print": touches.settling_print(builtins.print),
            # The classes a failed tool call or gather() raises, by the names their errors show,
            # so `except ToolError as e:` works as the model reads it (a block may shadow them).
            "ToolError": wire.ToolError,
            "GatherError": schedule.GatherError,
        }
        doc, apropos, defs = helpers.make_helpers(rt)
        vis_attach, vis_attach_bytes = attach.make_helpers(rt)
        hooks.update(doc=doc, apropos=apropos, defs=defs, vis_attach=vis_attach, vis_attach_bytes=vis_attach_bytes)
        hooks["network_probe"] = probe.network_probe
        for name, value in hooks.items():
            rt.set_builtin(name, value)
        # Every other builtin as it is now: what each block starts from.
        for name, value in builtins.__dict__.items():
            rt.builtins.setdefault(name, value)
        rt.installed = True
    outbox = rt.config.get("outbox")
    if outbox:
        os.makedirs(outbox, exist_ok=True)
        os.environ["VIS_OUTBOX"] = outbox
        rt.set_builtin("VIS_OUTBOX", outbox)
        pkgenv.configure(rt)
    if "sys_path" in (config or {}):
        paths.apply(rt.config.get("sys_path"))
    rt.outbox_seen = attach.scan(rt)
    rt.restore()
    return {"python": sys.version.split()[0], "tools": sorted(rt.tools)}


def install_tool(spec: dict) -> dict:
    rt = RT
    name = spec["name"]
    obj = tools.build(spec)
    rt.tools[name] = obj
    rt.specs[name] = spec
    rt.removed.discard(name)
    rt.registry.pop(name, None)
    rt.globals.pop(name, None)
    rt.set_builtin(name, obj)
    return {"name": name, "signature": tools.signature_text(obj) if callable(obj) else None}


def remove_tool(name: str) -> dict:
    rt = RT
    present = name in rt.tools
    rt.tools.pop(name, None)
    rt.specs.pop(name, None)
    rt.drop_builtin(name)
    if present:
        rt.removed.add(name)
    return {"removed": present}


def run_block(request: dict) -> dict:
    """Request: src/protocol/run-block.ts RunBlockRequest ({code, session?, stdout_cap?})."""
    if not RT.installed:
        install_runtime({})
    try:
        return block.run(request)
    except KeyboardInterrupt as e:
        # Sent right behind its block, an interrupt can land before the block's code starts
        # (while it is compiled) or as its bookkeeping ends: the block was interrupted all the
        # same, and answers as an interrupted block does instead of failing the op.
        return interrupted_block(e, request)
    except BaseException:
        RT.forget_reported()  # the host gets an error instead of this block's state
        raise


def interrupted_block(exc: KeyboardInterrupt, request: dict) -> dict:
    """The outcome of a block whose interrupt landed outside its own code."""
    RT.forget_reported()  # what this block changed is reported again by the next one
    return block.interrupted(exc, request)


def code_cache() -> dict:
    """How many block texts the code cache holds and how often it answered (diagnostics)."""
    return block.code_cache_stats()


def snapshot_defs() -> dict:
    return snapshot.take(RT)


def restore_defs(snap) -> dict:
    return block.restore_defs(snap)


def count_top_level_forms(code: str) -> int:
    """Statement count by this interpreter's parser; unparseable code raises its SyntaxError."""
    return len(ast.parse(code, "<block>", "exec").body)


def validate_no_banned_defs(code: str) -> dict | None:
    try:
        tree = ast.parse(code, "<block>", "exec")
    except SyntaxError:
        return None  # run_block reports it as a syntax error with its position
    return banned.check(tree)


def live_vars() -> list:
    """Exactly what the model's blocks created, without the runtime's own names."""
    return block.user_names(RT)


def live_state() -> dict:
    """The session's functions, classes and variables with their types (a compaction's note)."""
    return session_state.take(RT)


def system_var_names() -> list:
    return list(SYSTEM_VAR_NAMES)


def bind_ctx(ctx: dict) -> dict:
    """Rebinds `session` to the host's current context now (blocks rebind it too)."""
    if not isinstance(ctx, dict):
        raise TypeError("bind_ctx: the context is a dict")
    RT.globals["session"] = dict(ctx)
    return {"keys": list(ctx)}
