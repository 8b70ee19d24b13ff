# Runs before every attack case. Under the direct jail (harness.ts) it is the head of
# the case's script and installs the seccomp filter as the worker's `confine` would;
# through a session (sessions.test.ts) it runs once as the session's first block, with
# the case's environment handed over as host data (VIS_CASE), and the worker has already
# installed seccomp and the audit policy itself.
import os
import sys

try:
    _env = VIS_CASE["env"]  # noqa: F821 - bound by the session runner
except NameError:
    _env = None
if _env:
    os.environ.update(_env)


class _Refused:
    """Stands in for ctypes when the session's audit policy refuses it: every use raises
    the refusal, so an attack built on ctypes reads as contained by that refusal."""

    def __init__(self, err):
        self._err = err

    def __getattr__(self, name):
        raise self._err

    def __call__(self, *args, **kwargs):
        raise self._err


def _unshim():
    """Undo the guest runtime's Python-level refusals as a hostile guest would: they are
    ergonomics, not security, so every case must meet the kernel (or the audit hook)
    through the real process APIs. A no-op under the direct jail (there are no shims)."""
    import posix

    for name in dir(os):
        fn = getattr(os, name)
        if "_refuser" in getattr(fn, "__qualname__", "") and hasattr(posix, name):
            setattr(os, name, getattr(posix, name))
    # Modules not imported yet are patched on import by the runtime's one-shot meta path
    # entry (lazy.py): drop it, so their first import is the real one.
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__name__", "") != "_Finder"]
    # Sockets and lookups as CPython made them, not routed to the egress proxy.
    net = sys.modules.get("vis_guest.net")
    if net is not None:
        import socket

        socket.getaddrinfo = net._real_getaddrinfo
        socket.gethostbyname = net._real_gethostbyname
        socket.gethostbyname_ex = net._real_gethostbyname_ex
        socket.socket.connect = net._real_connect
        socket.socket.connect_ex = net._real_connect_ex
    sub = sys.modules.get("subprocess")
    if sub is not None and "_refuser" in getattr(sub.run, "__qualname__", ""):
        del sys.modules["subprocess"]
        import subprocess  # noqa: F401 - a fresh module with the real Popen


_unshim()

try:
    import ctypes
except ImportError as _e:
    ctypes = _Refused(_e)
except PermissionError as _e:
    ctypes = _Refused(_e)


def _install_seccomp():
    lib = os.environ.get("VIS_TEST_SECCOMP_LIB")
    if not lib:
        return

    class Options(ctypes.Structure):
        _fields_ = [("processes", ctypes.c_bool), ("network", ctypes.c_bool)]

    opts = Options(os.environ.get("VIS_TEST_PROCESSES") == "1", os.environ.get("VIS_TEST_NETWORK") == "1")
    tid = ctypes.c_long(0)
    rc = ctypes.CDLL(lib).vis_seccomp_install(ctypes.byref(opts), ctypes.byref(tid))
    if rc != 0:
        print("PRELUDE-FAIL seccomp", rc, flush=True)
        sys.exit(99)


_install_seccomp()
ROOT = os.environ.get("VIS_TEST_ROOT", os.getcwd())
OUTSIDE = os.environ.get("VIS_TEST_OUTSIDE", "/nonexistent")
DIST = os.environ.get("VIS_TEST_DIST", sys.prefix)
HOST_PORT = int(os.environ.get("VIS_TEST_HOST_PORT", "9"))
try:
    libc = ctypes.CDLL(None, use_errno=True)
except PermissionError as _e:
    libc = _Refused(_e)


def attempt(fn):
    """ESCAPED when fn returns, CONTAINED when it raises: the runner reads the verdict."""
    try:
        result = fn()
    except BaseException as e:  # noqa: BLE001 - any refusal counts
        print("CONTAINED", type(e).__name__, str(e)[:200], flush=True)
        return
    print("ESCAPED", repr(result)[:200], flush=True)


def on_others(fn):
    """ESCAPED when fn(pid) succeeds on any process visible besides this one; CONTAINED when
    it fails on every one, or when no other process can be seen at all (a session worker
    is alone in its pid namespace, as its init)."""
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    except BaseException as e:  # noqa: BLE001 - a refused listing hides them all
        print("CONTAINED", type(e).__name__, str(e)[:200], flush=True)
        return
    if not pids:
        print("CONTAINED no other process is visible", flush=True)
        return
    for pid in pids:
        try:
            result = fn(pid)
        except BaseException:  # noqa: BLE001
            continue
        print("ESCAPED", pid, repr(result)[:200], flush=True)
        return
    print("CONTAINED refused for every other process", pids, flush=True)


def check(escaped, detail=""):
    print("ESCAPED" if escaped else "CONTAINED", detail, flush=True)


def syscall_attempt(nr, *args):
    def go():
        r = libc.syscall(nr, *args)
        if r < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return r

    attempt(go)


def ok(detail=""):
    print("OK", detail, flush=True)
