"""Interrupts stay on: a block cannot ignore, replace or block the signals the host stops it with.

The host stops a block at its timeout by raising KeyboardInterrupt through SIGINT's Python
handler (a real-time signal sent to the interpreter thread calls PyErr_SetInterruptEx(SIGINT)).
`signal.signal(SIGINT, SIG_IGN)`, a handler that swallows it, or `pthread_sigmask` blocking
either signal would switch that off, so they raise the process-surface refusal here.

This is wording, not the bound: signal.signal raises no audit event, and native code can
reach sigaction directly (or a fresh `_signal` module object skips these wrappers). What
bounds a block is the host killing its worker after a short grace (src/sessions/deadline.ts);
this module makes the common case fail early and say why. Setting the runtime's own SIGINT
handler again (what `signal.getsignal` returned) stays allowed: it changes nothing."""

import _signal
import signal as _signal_py

from .errors import ProcessRefused

_real = {
    name: getattr(_signal, name)
    for name in ("signal", "pthread_sigmask", "sigwait", "sigwaitinfo", "sigtimedwait")
    if hasattr(_signal, name)
}


def _guarded(rt) -> set:
    sigs = {int(_signal.SIGINT)}
    configured = rt.config.get("interrupt_signal")
    sigs.add(int(configured) if isinstance(configured, int) else int(_signal.SIGRTMIN) + 3)
    return sigs


def _name(sig: int) -> str:
    try:
        return _signal_py.Signals(sig).name
    except ValueError:
        return f"SIGRTMIN+{sig - int(_signal.SIGRTMIN)}" if sig >= int(_signal.SIGRTMIN) else str(sig)


def _refusal(door: str, sig: int) -> ProcessRefused:
    return ProcessRefused(
        f"{door}({_name(sig)}): changing how a block is interrupted is refused in the sandbox; the host "
        "stops every block at its timeout (and replaces its worker when it does not stop). "
        "Use try/finally for cleanup, and catch Exception rather than BaseException."
    )


def _as_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def install(rt) -> None:
    guarded = _guarded(rt)
    real_signal = _real["signal"]
    # SIGINT's handler as installed before any block ran (_vis._sigint). The runtime's own
    # signal has a C handler Python does not see: any Python-level setting would replace it.
    own = _signal.getsignal(_signal.SIGINT)

    def signal(signalnum, handler):
        sig = _as_int(signalnum)
        if sig in guarded and (sig != int(_signal.SIGINT) or handler is not own):
            raise _refusal("signal.signal", sig)
        return real_signal(signalnum, handler)

    def _check_set(door: str, sigset) -> None:
        try:
            wanted = {_as_int(s) for s in sigset}
        except TypeError:
            return  # the real call reports the bad argument
        hit = sorted(s for s in wanted & guarded if s is not None)
        if hit:
            raise _refusal(door, hit[0])

    patched = {"signal": signal}
    if "pthread_sigmask" in _real:
        real_mask = _real["pthread_sigmask"]

        def pthread_sigmask(how, mask):
            if how in (_signal.SIG_BLOCK, _signal.SIG_SETMASK):
                _check_set("signal.pthread_sigmask", mask)
            return real_mask(how, mask)

        patched["pthread_sigmask"] = pthread_sigmask
    for name in ("sigwait", "sigwaitinfo"):
        if name in _real:
            patched[name] = _waiter(name, _real[name], _check_set)
    if "sigtimedwait" in _real:
        real_timed = _real["sigtimedwait"]

        def sigtimedwait(sigset, timeout):
            _check_set("signal.sigtimedwait", sigset)
            return real_timed(sigset, timeout)

        patched["sigtimedwait"] = sigtimedwait
    # signal.py's wrappers call _signal.<name> at call time; sigwaitinfo and sigtimedwait it
    # re-exports as they are: both modules get the guarded versions.
    for name, fn in patched.items():
        fn.__name__ = name
        fn.__doc__ = getattr(_real.get(name), "__doc__", None)
        setattr(_signal, name, fn)
        if name in ("sigwaitinfo", "sigtimedwait"):
            setattr(_signal_py, name, fn)


def _waiter(name: str, real, check):
    def wait(sigset):
        check(f"signal.{name}", sigset)
        return real(sigset)

    return wait
