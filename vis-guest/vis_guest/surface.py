"""The process surface: every Python door to spawning a process (or serving sockets from
asyncio) raises the host's one canonical refusal. Wording only: the OS jail enforces.
subprocess and asyncio are patched when something first imports them (lazy.py)."""

import os

from .errors import ProcessRefused
from .lazy import when_imported

_OS_DOORS = (
    "system",
    "popen",
    "fork",
    "forkpty",
    "posix_spawn",
    "posix_spawnp",
    *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
)
_SUBPROCESS_DOORS = ("run", "call", "check_call", "check_output", "getoutput", "getstatusoutput")


def text(rt) -> str:
    """The host-rendered refusal: with the shell tool bound, or without it."""
    surface = rt.config.get("process_surface") or {}
    if isinstance(surface, str):
        return surface
    if "shell" in rt.tools:
        return surface.get("shell_on") or "processes are never spawned from Python; use the shell(...) tool"
    return surface.get("shell_off") or "processes cannot be spawned from this session"


def _refuser(rt, door: str):
    def refuse(*_args, **_kwargs):
        raise ProcessRefused(f"{door}: {text(rt)}")

    refuse.__name__ = door.rsplit(".", 1)[-1]
    return refuse


def _server_refuser(rt, door: str):
    def refuse(*_args, **_kwargs):
        tool = (rt.config.get("tool_hints") or {}).get("serve")
        where = f"use {tool}" if tool else "ask the host for a tool that serves (apropos('serve'))"
        raise ProcessRefused(f"{door}: serving sockets from a block is refused in the sandbox; {where}")

    return refuse


def install(rt) -> None:
    for name in _OS_DOORS:
        if hasattr(os, name):
            setattr(os, name, _refuser(rt, f"os.{name}"))
    when_imported("subprocess", lambda subprocess: _patch_subprocess(rt, subprocess))
    when_imported("asyncio", lambda asyncio: _patch_asyncio(rt, asyncio))


def _patch_subprocess(rt, subprocess) -> None:
    class Popen(subprocess.Popen):
        def __init__(self, *_args, **_kwargs):
            raise ProcessRefused(f"subprocess.Popen: {text(rt)}")

        def __del__(self):
            pass

    subprocess.Popen = Popen
    for name in _SUBPROCESS_DOORS:
        setattr(subprocess, name, _refuser(rt, f"subprocess.{name}"))


def _patch_asyncio(rt, asyncio) -> None:
    async def _no_process(*_args, **_kwargs):
        raise ProcessRefused(f"asyncio subprocess: {text(rt)}")

    asyncio.create_subprocess_exec = _no_process
    asyncio.create_subprocess_shell = _no_process
    asyncio.subprocess.create_subprocess_exec = _no_process
    asyncio.subprocess.create_subprocess_shell = _no_process
    loop = asyncio.base_events.BaseEventLoop
    loop.subprocess_exec = _no_process
    loop.subprocess_shell = _no_process

    async def _no_server(*_args, **_kwargs):
        _server_refuser(rt, "asyncio server")()

    asyncio.start_server = _no_server
    asyncio.streams.start_server = _no_server
    if hasattr(asyncio, "start_unix_server"):
        asyncio.start_unix_server = _no_server
        asyncio.streams.start_unix_server = _no_server
    loop.create_server = _no_server
    loop.create_unix_server = _no_server
