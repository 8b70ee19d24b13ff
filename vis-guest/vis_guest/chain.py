"""The whole story of a failure for a person reading it (the session page shows it collapsed):
every exception of the chain (causes first, as Python prints them) with its frames. The error's
message and excerpt name only the outermost exception at the user's deepest line; a wrapped
failure (`raise X from e`, a failure inside `except`) or a call through functions hides the rest.

Frames of the guest runtime itself are left out (they are the machinery, not the user's code),
and the block's own frames are named by line, not by their per-block file name, so the same
failure reads the same in every block."""

import linecache
import os

_GUEST_DIR = os.path.dirname(os.path.abspath(__file__))
# Long enough for a deep recursion's story, short enough to stay a small part of the block's row.
MAX_CHARS = 8000
MAX_EXCEPTIONS = 8
MAX_FRAMES = 40


def _chain(exc: BaseException) -> list:
    """Innermost cause first, as Python's own traceback prints them."""
    seen, out = set(), []
    cur = exc
    while cur is not None and id(cur) not in seen and len(out) < MAX_EXCEPTIONS:
        seen.add(id(cur))
        out.append(cur)
        cur = cur.__cause__ if cur.__cause__ is not None else (None if cur.__suppress_context__ else cur.__context__)
    return list(reversed(out))


def _frames(exc: BaseException, filename: str) -> list:
    lines = []
    tb = exc.__traceback__
    while tb is not None and len(lines) < MAX_FRAMES:
        code = tb.tb_frame.f_code
        path = code.co_filename
        if os.path.abspath(path).startswith(_GUEST_DIR + os.sep):
            tb = tb.tb_next
            continue
        text = linecache.getline(path, tb.tb_lineno).strip()
        if path == filename:
            where = f"this block, line {tb.tb_lineno}"
        elif path.startswith("<vis-block-"):
            where = f"an earlier block, line {tb.tb_lineno - code.co_firstlineno + 1} of {code.co_name}()"
        else:
            where = f'File "{path}", line {tb.tb_lineno}'
        # An earlier block's frame already names its function.
        if code.co_name != "<module>" and (path == filename or not path.startswith("<vis-block-")):
            where += f", in {code.co_name}"
        lines.append(f"  {where}" + (f"\n    {text}" if text else ""))
        tb = tb.tb_next
    return lines


def _head(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def describe(exc: BaseException, filename: str) -> str | None:
    """The chain as text, or None when it says no more than the message and excerpt do (one
    exception raised in at most one frame of the user's code)."""
    chain = _chain(exc)
    parts = []
    frames = 0
    for i, e in enumerate(chain):
        fr = _frames(e, filename)
        frames += len(fr)
        if i > 0:
            parts.append(
                "\nThe above exception was the direct cause of the following exception:\n"
                if e.__cause__ is chain[i - 1]
                else "\nDuring handling of the above exception, another exception occurred:\n"
            )
        parts.append("\n".join(["Traceback (most recent call last):", *fr, _head(e)]) if fr else _head(e))
    if len(chain) < 2 and frames < 2:
        return None
    text = "\n".join(parts)
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS // 2] + "\n… (cut) …\n" + text[-MAX_CHARS // 2 :]
    return text
