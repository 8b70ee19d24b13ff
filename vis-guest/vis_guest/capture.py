"""Per-block output capture.

Both sys.stdout and sys.stderr are teed into ONE buffer, in the order written: a model must
see the warnings and tracebacks its own code prints, and interleaving matters more than the
split. Everything still streams live to the host's writers. The outcome's `stdout` is
UTF-8 with CRLF folded to LF, capped in bytes with a visible truncation marker; past the
cap nothing more is streamed either."""

DEFAULT_CAP = 1 << 20


class Capture:
    def __init__(self, cap: int):
        self.cap = cap
        self.parts: list = []
        self.size = 0
        self.dropped = 0

    def take(self, text: str) -> str:
        """Record text; returns the part that fits under the cap (to forward)."""
        data = text.encode("utf-8", "replace")
        room = self.cap - self.size
        if len(data) <= room:
            self.parts.append(text)
            self.size += len(data)
            return text
        kept = data[: max(room, 0)].decode("utf-8", "ignore")
        self.dropped += len(data) - len(kept.encode("utf-8"))
        if kept:
            self.parts.append(kept)
            self.size += len(kept.encode("utf-8"))
        return kept

    def text(self) -> str:
        out = "".join(self.parts).replace("\r\n", "\n")
        if self.dropped:
            out += f"\n[output truncated: {self.dropped} more bytes not shown (cap {self.cap} bytes per block)]\n"
        return out


class Tee:
    def __init__(self, target, capture: Capture):
        self._target = target
        self._capture = capture

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        kept = self._capture.take(text)
        if kept:
            try:
                self._target.write(kept)
            except Exception:  # noqa: BLE001 - a broken live stream must not fail the block
                pass
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        flush = getattr(self._target, "flush", None)
        if flush:
            flush()

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self):
        return self._target.fileno()

    def __getattr__(self, name):
        return getattr(self._target, name)
