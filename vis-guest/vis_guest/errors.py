"""Turn a failure into an error a model can act on: phase, the user's line and column,
a numbered excerpt with a caret, and hints (each with a flag)."""

import errno
import itertools
import keyword
import re
import unicodedata

from . import chain, wire
from .schedule import GatherError

_CONFUSABLE = {
    "\u2014": "-",
    "\u2013": "-",
    "\u2212": "-",
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u00a0": " ",
    "\u2026": "...",
    "\u00d7": "*",
}
# Markdown that is never Python: a fence, a quote, bold text.
_MARKUP = re.compile(r"^(```|~~~|\*\*\w|>\s*[A-Za-z]|`[^`\s])")
# A markdown heading: two or more hashes, a space, then a word ("## Root cause found"); one
# hash is how a Python comment looks too.
_HEADING = re.compile(r"^#{2,6}\s+\w")
# A list item ("- read the file", "1. Read it"): the words after the marker decide.
_LIST_ITEM = re.compile(r"^([-*+]|\d+[.)])\s+")
# A word of prose, maybe opening a bracket or closing a clause: "(it", "fine).", "I've", "First,".
_WORD = re.compile(r"\(?[A-Za-z][A-Za-z']*[)]?[,:;.!?]?")
_UNBALANCED = ("was never closed", "unmatched", "does not match", "unterminated", "EOF while scanning")
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


class ProcessRefused(PermissionError):
    """Processes are never spawned from Python: carries the host's canonical text."""


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "ignore"))


def excerpt(lines: list, line: int, col: int | None, end_col: int | None) -> str:
    lo, hi = max(1, line - 2), min(len(lines), line + 2)
    width = len(str(hi))
    out = []
    for n in range(lo, hi + 1):
        out.append(f"{n:>{width}} | {lines[n - 1]}")
        if n == line and col:
            span = max(1, (end_col or col + 1) - col)
            out.append(f"{'':>{width}} | {' ' * (col - 1)}{'^' * span}")
    return "\n".join(out)


def _user_position(exc: BaseException, filename: str, lines: list):
    """(line, col, end_col) of the deepest traceback frame in the user's block."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = tb
        tb = tb.tb_next
    if found is None:
        return None
    line, col, end_col = found.tb_lineno, None, None
    try:
        pos = list(found.tb_frame.f_code.co_positions())[found.tb_lasti // 2]
        if pos[0] == line and pos[2] is not None and 0 < line <= len(lines):
            text = lines[line - 1]
            start = pos[2]
            end = pos[3] if pos[1] == line and pos[3] is not None else None
            if end is None or end <= start:
                end = len(text.encode("utf-8"))
            col = _char_col(text, start) + 1
            end_col = _char_col(text, end) + 1
    except (IndexError, ValueError):
        pass
    return line, col, end_col


def _earlier_block_frame(exc: BaseException, filename: str) -> str | None:
    """Where it really failed when that is in a function an earlier block defined."""
    deepest = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<vis-block-"):
            deepest = tb
        tb = tb.tb_next
    if deepest is None or deepest.tb_frame.f_code.co_filename == filename:
        return None
    import linecache

    code = deepest.tb_frame.f_code
    text = linecache.getline(code.co_filename, deepest.tb_lineno).strip()
    first = code.co_firstlineno
    return (
        f"raised in {code.co_name}() (defined in an earlier block), line {deepest.tb_lineno - first + 1} of it: {text}"
    )


def _phase(exc: BaseException) -> str:
    if isinstance(exc, wire.ToolError):
        return "host"
    if isinstance(exc, GatherError) and any(isinstance(e, wire.ToolError) for e in exc.exceptions):
        return "host"
    return "runtime"


def _message(exc: BaseException, removed: set, lost: dict) -> str:
    if isinstance(exc, wire.ToolError):
        return f"tool {exc.tool} failed: {exc.host_message}"
    if isinstance(exc, GatherError):
        return str(exc)
    if isinstance(exc, ProcessRefused):
        return str(exc)
    if isinstance(exc, NameError) and getattr(exc, "name", None) in removed:
        n = exc.name
        return (
            f"NameError: name '{n}' is not defined: the tool {n} was removed from this session; "
            f"find what replaces it with apropos('{n}')"
        )
    if isinstance(exc, NameError) and getattr(exc, "name", None) in lost:
        n = exc.name
        return (
            f"NameError: name '{n}' is not defined: its value was lost when the worker was replaced "
            f"(cause: {lost[n]}); functions, classes, imports and plain data were restored, other "
            f"values were not: create '{n}' again"
        )
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_QUOTED_PATH = re.compile(r"'(/[^']*)'")


def _denied(exc: BaseException) -> BaseException:
    """The refusal inside a wrapper (urllib's URLError keeps it as .reason)."""
    for _ in range(4):
        if isinstance(exc, OSError) and (isinstance(exc, PermissionError) or exc.errno in _DENIED):
            return exc
        inner = getattr(exc, "reason", None)
        if not isinstance(inner, BaseException):
            inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def _denial_hint(exc: BaseException, policy: dict, hints: dict) -> str | None:
    if isinstance(exc, ProcessRefused):
        return None
    exc = _denied(exc)
    if not isinstance(exc, OSError) or not (isinstance(exc, PermissionError) or exc.errno in _DENIED):
        return None
    text = str(exc)
    if "[code.__new__]" in text:
        return "sandbox: code objects are never built by hand here; define the function in Python source"
    if "[compile]" in text:
        return "sandbox: code compiled here cannot pass for the Python distribution's; give it a filename of its own"
    what = getattr(exc, "filename", None)
    if what is None:
        # The audit hook's refusal names the path in its message rather than in .filename.
        found = _QUOTED_PATH.search(text)
        what = found.group(1) if found else None
    if what is None and any(w in text.lower() for w in ("socket", "connect", "network", "getaddrinfo")):
        net = policy.get("network")
        enabled = net.get("enabled") if isinstance(net, dict) else bool(net)
        allow = net.get("allow") if isinstance(net, dict) else None
        shown = [a if isinstance(a, str) else str(a.get("host")) for a in allow or []]
        state = f"limited to {', '.join(shown)}" if enabled and shown else ("on" if enabled else "off")
        if enabled:
            return f"sandbox: network access is {state} for this session; network_probe(url) shows which rule decides"
        tool = hints.get("network") or "a host tool (apropos('http'))"
        return f"sandbox: network access is {state} for this session; use {tool} instead"
    roots = policy.get("roots") or []
    shown = f"access to {what}" if what else "this operation"
    tool = hints.get("files") or "a host file tool (apropos('file'))"
    where = ", ".join(str(r) for r in roots) if roots else "none"
    return f"sandbox: {shown} was denied: it is outside the approved roots ({where}); use {tool} instead"


def _two_words(text: str) -> bool:
    """Two plain words side by side near the start: code never puts two names next to each
    other, but prose always does ("I will", "the code"). Keywords do not count ("Foo is not
    None", "None if x else y"), nor does a word closing a clause ("First, I'll")."""
    tokens = text.split()[:6]
    for a, b in itertools.pairwise(tokens):
        if not (_WORD.fullmatch(a) and _WORD.fullmatch(b)) or a[-1] in ",:;.!?)":
            continue
        if not any(keyword.iskeyword(w.strip("(),:;.!?")) for w in (a, b)):
            return True
    return False


def _compiles(line: str) -> bool:
    try:
        compile(line, "<probe>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _prose_line(text: str, after_heading: bool) -> bool:
    """Markup, a list item or a sentence. Under a markdown heading a sentence may open with
    anything (`parse()` drops..., lowercase, a number); elsewhere it opens with a capital."""
    if _MARKUP.match(text):
        return True
    item = _LIST_ITEM.match(text)
    if item:
        return _two_words(text[item.end() :])
    if text[0].isupper():
        return _two_words(text)
    # Lowercase under a heading ("the loop stops early"): it must open with two plain words.
    return after_heading and _two_words(" ".join(text.split()[:2]))


def _starts_with_prose(lines: list) -> bool:
    """Does the reply open with prose before its first line of code? A markdown heading
    (`## Root cause found`) is a comment to Python, so the lines under it decide: headings,
    list items and sentences are read until the first line that parses on its own (code).
    Only asked once the block failed to parse, and a prose line must not parse on its own,
    so code is never called prose."""
    after_heading = False
    seen = 0
    for raw in lines:
        text = raw.strip()
        if not text:
            continue
        if text.startswith("#"):
            after_heading = after_heading or bool(_HEADING.match(text))
            continue
        if _compiles(text):
            return False
        if _prose_line(text, after_heading):
            return True
        seen += 1
        if seen >= 3:
            return False
    return False


def _syntax_hints(exc: SyntaxError, lines: list, hints: list, flags: list) -> None:
    msg = exc.msg or ""
    # Non-ASCII punctuation in code position (em dash, curly quotes) pasted from prose; the
    # parser names it, and characters inside string literals never get here.
    if "invalid character" in msg or "invalid non-printable character" in msg:
        n = exc.lineno or 0
        text = lines[n - 1] if 0 < n <= len(lines) else ""
        ch = next((c for c in text[(exc.offset or 1) - 1 :] if ord(c) > 127), None) or next(
            (c for c in text if ord(c) > 127), None
        )
        if ch:
            name = unicodedata.name(ch, "character")
            fix = f"use ASCII {_CONFUSABLE[ch]!r}" if ch in _CONFUSABLE else "remove it or use an ASCII equivalent"
            hints.append(f"line {n} has {ch!r} (U+{ord(ch):04X} {name}) in code; {fix}")
            flags.append("non-ascii")
    if _starts_with_prose(lines):
        hints.append(
            "the reply starts with prose, and only Python runs here: send just the code, "
            "with any explanation as # comments"
        )
        flags.append("prose")
        return  # the parser's complaint about a sentence (an unclosed quote in "I've") misleads
    if any(s in msg for s in _UNBALANCED):
        hints.append(f"unbalanced quote or bracket at line {exc.lineno}, column {exc.offset}: {msg}")
        flags.append("unbalanced")
    if isinstance(exc, IndentationError):
        hints.append(
            f"indentation error at line {exc.lineno}: top-level code starts at column 1; indent blocks by 4 spaces"
        )
        flags.append("indentation")


# asyncio's own words when code expects the event loop a notebook runs (a block has none).
_NO_LOOP = ("no running event loop", "There is no current event loop")


def _usage_hints(exc: BaseException, message: str, hints: list, flags: list) -> None:
    """Failures whose cause is how a block runs, not the code's own logic."""
    if isinstance(exc, TypeError) and "DeferredCall" in message:
        # json.dumps(results), sorted(results), results[0] + 1... on calls a list still holds.
        hints.append(
            "a tool call inside a list, dict or argument has not run yet (calls in comprehensions and "
            "containers stay deferred): run them together first, e.g. "
            "`results = await gather(*[tool(x) for x in xs])`, or assign each call as a statement"
        )
        flags.append("deferred")
    elif isinstance(exc, TypeError) and ("'Tool' object" in message or "'Namespace' object" in message):
        hints.append(
            "a tool is used as a value here: call it (`r = cat(path)`, then use r); a value a block "
            "assigns to a tool's name lasts for that block only"
        )
        flags.append("tool-as-value")
    elif isinstance(exc, RuntimeError) and any(s in message for s in _NO_LOOP):
        hints.append(
            "a block runs without an asyncio event loop: await coroutines directly (top-level await "
            "works), use gather() for concurrency, or put the asyncio code in `async def main()` and "
            "call asyncio.run(main())"
        )
        flags.append("no-event-loop")
    elif isinstance(exc, EOFError) and "reading a line" in message:
        hints.append(
            "nothing is typed into this block: its standard input is empty, so input() cannot ask; "
            "put the value in the code (or read it from a file)"
        )
        flags.append("no-stdin")


def build(
    exc: BaseException,
    *,
    syntax: bool,
    filename: str,
    source: str,
    removed: set,
    policy: dict,
    tool_hints: dict | None = None,
    lost: dict | None = None,
) -> dict:
    lines = source.splitlines()
    hints: list = []
    flags: list = []
    err: dict = {}
    if syntax and isinstance(exc, SyntaxError):
        err["phase"] = "syntax"
        err["message"] = f"{type(exc).__name__}: {exc.msg}"
        line, col = exc.lineno, exc.offset
        end = getattr(exc, "end_offset", None) if getattr(exc, "end_lineno", None) == line else None
        if end is not None and col is not None and end <= col:
            end = None
        pos = (line, col, end) if line else None
        _syntax_hints(exc, lines, hints, flags)
    else:
        err["phase"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else _phase(exc)
        if isinstance(exc, KeyboardInterrupt):
            err["message"] = "KeyboardInterrupt: the block was interrupted"
        else:
            err["message"] = _message(exc, removed, lost or {})
        pos = _user_position(exc, filename, lines)
        where = _earlier_block_frame(exc, filename)
        if where:
            err["message"] += f"\n({where})"
        story = None if isinstance(exc, KeyboardInterrupt) else chain.describe(exc, filename)
        if story:
            err["traceback"] = story
        if isinstance(exc, NameError) and getattr(exc, "name", None) in (lost or {}):
            flags.append("lost")
        elif isinstance(exc, NameError) and getattr(exc, "name", None) == "display":
            hints.append(
                "display() is IPython's, and a block is not a notebook cell: print() what you want to see "
                "(the block's last expression is its result)"
            )
            flags.append("undefined-name")
        elif isinstance(exc, NameError) and not isinstance(exc, UnboundLocalError):
            name = getattr(exc, "name", None) or ""
            hints.append(f"'{name}' is not defined here; search tools and helpers with apropos('{name}')")
            flags.append("undefined-name")
        if isinstance(exc, ProcessRefused):
            flags.append("sandbox")
        _usage_hints(exc, err["message"], hints, flags)
        denial = _denial_hint(exc, policy, tool_hints or {})
        if denial:
            hints.append(denial)
            flags.append("sandbox")
    if pos and pos[0] and 0 < pos[0] <= len(lines):
        err["line"] = pos[0]
        if pos[1]:
            err["column"] = pos[1]
        err["excerpt"] = excerpt(lines, pos[0], pos[1], pos[2])
    if hints:
        err["hints"] = hints
        err["message"] += "".join(f"\nhint: {h}" for h in hints)
    if flags:
        err["flags"] = flags
    return err


LOOP_NOTICE = (
    "LOOP: this exact failure happened 3 times in a row. Stop repeating the same code: read the "
    "error, inspect your state (print, doc, apropos, defs) and change approach.\n"
)


def loop_breaker(rt, err: dict | None) -> None:
    """Prefix the third identical failure in a row; success or a different failure resets."""
    if err is None:
        rt.failure_key, rt.failure_count = None, 0
        return
    key = (err.get("phase"), err.get("message"), err.get("line"), err.get("column"))
    if key == rt.failure_key:
        rt.failure_count += 1
    else:
        rt.failure_key, rt.failure_count = key, 1
    if rt.failure_count >= 3:
        err["message"] = LOOP_NOTICE + err["message"]
        err.setdefault("flags", []).append("loop")
