"""Compiled blocks by their source text: a block run again (a poll, a retry, `print(x)`)
skips the parse, the rewrite and the compile, which are most of a small block's cost.

What a block compiles to depends on its text alone (the rewrite is syntactic, the compile
flags are fixed, `dont_inherit`), so a cached entry is the same code. It is kept only where
running it again cannot be told apart from compiling it again:
  - the code has no nested code objects (no def, class, lambda, generator expression, or
    comprehension before 3.12): no function carries the block's filename into a later
    block, where errors.py tells "defined in an earlier block" by that filename, and no
    definition can be named after a tool (block._tool_named_defs, which depends on the
    tools bound now);
  - parsing and compiling it showed no warning: the parser's and the compiler's warnings
    (an invalid escape, `x is 300`) show on every run;
  - warnings.filters is what it was when the entry was made (an ignored warning might show
    under the new filters): any change empties the cache.
A cached block keeps the filename `<vis-block-N>` of the run that compiled it: an opaque label,
still unique to that text and still in linecache; the one trace of the reuse is that a
traceback the block prints itself names that earlier N."""

import linecache
import warnings

MAX_ENTRIES = 64
MAX_SOURCE = 8 * 1024


class CodeCache:
    def __init__(self):
        self.entries: dict = {}  # source -> (code, found), least recently used first
        self.filters: list = list(warnings.filters)
        self.hits = 0

    def get(self, source: str):
        """(code, found) for this text, or None."""
        if warnings.filters != self.filters:
            self.entries.clear()
            self.filters = list(warnings.filters)
            return None
        hit = self.entries.pop(source, None)
        if hit is None:
            return None
        self.entries[source] = hit  # most recently used now
        code = hit[0]
        # A block may have cleared linecache; tracebacks read the lines from there.
        linecache.cache[code.co_filename] = (len(source), None, source.splitlines(True), code.co_filename)
        self.hits += 1
        return hit

    def put(self, source: str, code, found: list, warned: bool) -> None:
        if warned or len(source) > MAX_SOURCE or any(isinstance(c, type(code)) for c in code.co_consts):
            return
        if len(self.entries) >= MAX_ENTRIES:
            del self.entries[next(iter(self.entries))]
        self.entries[source] = (code, found)


def watching_warnings(fn):
    """fn() and whether it showed a warning (seen through warnings._showwarnmsg, the hook
    every shown warning passes; the filters are not touched, so nothing else changes)."""
    shown = []
    original = getattr(warnings, "_showwarnmsg", None)
    if original is None:  # not this CPython's warnings module: assume it warned (no caching)
        return fn(), True

    def watch(msg):
        shown.append(msg)
        original(msg)

    warnings._showwarnmsg = watch
    try:
        result = fn()
    finally:
        if warnings._showwarnmsg is watch:
            warnings._showwarnmsg = original
    return result, bool(shown)
