"""The running block's sys.stdin, fed by the host's `stdin` requests.

The addon queues each request line for the block it names; this stream decodes them,
blocks (interruptibly) while the host has sent nothing yet, and reads as end of file once
the host said `eof` or when no block is running. Input is per block: a new block starts
with an empty buffer."""

import io
import json

import _vis


class WireStdin(io.TextIOBase):
    def __init__(self) -> None:
        self._job = 0
        self._buf = ""
        self._eof = False

    # -- the io.TextIOBase surface ------------------------------------------------
    name = "<stdin>"
    encoding = "utf-8"
    errors = "strict"

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno: sys.stdin is fed by the host, not a file")

    def read(self, size: int | None = -1) -> str:
        if size is None or size < 0:
            while self._more():
                pass
            return self._take(len(self._current()))
        while len(self._current()) < size and self._more():
            pass
        return self._take(min(size, len(self._buf)))

    def readline(self, size: int | None = -1) -> str:
        while "\n" not in self._current() and (size is None or size < 0 or len(self._buf) < size) and self._more():
            pass
        nl = self._buf.find("\n")
        n = len(self._buf) if nl < 0 else nl + 1
        if size is not None and size >= 0:
            n = min(n, size)
        return self._take(n)

    def readlines(self, hint: int = -1) -> list:
        return list(iter(self.readline, ""))

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    # -- feeding ----------------------------------------------------------------------
    def _current(self) -> str:
        job = _vis.current_job()
        if job != self._job:
            self._job, self._buf, self._eof = job, "", False
        return self._buf

    def _take(self, n: int) -> str:
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _more(self) -> bool:
        """Waits for the next chunk; False at end of input."""
        self._current()
        if self._eof:
            return False
        line = _vis.stdin_read()
        if line is None:
            self._eof = True
            return False
        msg = json.loads(line)
        data = msg.get("data", "")
        if not isinstance(data, str):
            raise ValueError("stdin: the host sent non-text input")
        self._buf += data
        if msg.get("eof") is True:
            self._eof = True
        return True


def preload(data: str) -> None:
    """The running block's whole input, sent with the block itself (`stdin` in its request):
    reads take it, then end of file, without waiting for the host. An empty string is a block
    nobody can type into: input() raises EOFError at once instead of waiting out the timeout."""
    import sys

    stream = sys.stdin
    if not isinstance(stream, WireStdin):
        return
    if not isinstance(data, str):
        raise ValueError("stdin: the host sent non-text input")
    stream._current()  # the running job's buffer
    stream._buf += data
    stream._eof = True


def install() -> None:
    import sys

    if not isinstance(sys.stdin, WireStdin):
        sys.stdin = WireStdin()
