# Runs before every attack case, as the worker's `confine` will: installs the
# seccomp filter (when the runner asks for that layer), then offers attempt().
import ctypes
import os
import sys


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
libc = ctypes.CDLL(None, use_errno=True)


def attempt(fn):
    """ESCAPED when fn returns, CONTAINED when it raises: the runner reads the verdict."""
    try:
        result = fn()
    except BaseException as e:  # noqa: BLE001 - any refusal counts
        print("CONTAINED", type(e).__name__, str(e)[:200], flush=True)
        return
    print("ESCAPED", repr(result)[:200], flush=True)


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
