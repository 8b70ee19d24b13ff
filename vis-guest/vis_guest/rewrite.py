"""The AST rewrite a block (and a restored snapshot) goes through before compiling.

The block compiles as MODULE code with PyCF_ALLOW_TOP_LEVEL_AWAIT rather than inside an
explicit `async def` wrapper: the interpreter then keeps every module-scope binding (any
statement, any nesting, walrus, `del`, `import *`, `from __future__`, annotations, `locals()`)
in the session globals by itself, and rejects top-level `return`/`yield`/`nonlocal` at the
user's own line. A code object that awaits comes out flagged CO_COROUTINE, and evaluating
it yields ONE coroutine that our scheduler drives. The rewrite only adds settling calls."""

import ast

FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
SETTLE, LAST, AWAIT, ASETTLE = "__vis_settle__", "__vis_last__", "__vis_await__", "__vis_asettle__"
UNSHADOW = "__vis_unshadow__"


def _at(node, like):
    return ast.copy_location(node, like)


class Edits:
    """Counts the wraps: a block with none compiles from its text (cheaper for tiny blocks)."""

    def __init__(self):
        self.count = 0

    def __bool__(self):
        return self.count > 0

    def add(self) -> None:
        self.count += 1


def _wrap(fn: str, value: ast.expr, edits: Edits) -> ast.Call:
    edits.add()
    return _at(ast.Call(func=_at(ast.Name(id=fn, ctx=ast.Load()), value), args=[value], keywords=[]), value)


_BODIES = ("body", "orelse", "finalbody")


class _Settler:
    """Walks statement lists only (statements cannot hide inside expressions), which keeps
    the rewrite cheap; `await` operands are found by a separate walk when the text has one."""

    def __init__(self, last: ast.stmt | None, edits: Edits):
        self.last = last
        self.edits = edits

    def stmts(self, body: list, scope: str) -> list:
        out = []
        for node in body:
            out.extend(self.stmt(node, scope))
        return out

    def stmt(self, node: ast.stmt, scope: str) -> list:
        if isinstance(node, ast.Expr):
            return [self.expr_stmt(node, scope)]
        if isinstance(node, ast.Return):
            if node.value is not None:
                if scope == "async":
                    node.value = _at(ast.Await(value=_wrap(ASETTLE, node.value, self.edits)), node.value)
                else:
                    node.value = _wrap(SETTLE, node.value, self.edits)
            return [node]
        if isinstance(node, ast.ImportFrom) and scope == "module" and any(a.name == "*" for a in node.names):
            # `from m import *` must never overwrite a tool: drop what it shadowed right away.
            self.edits.add()
            call = _at(ast.Call(func=_at(ast.Name(id=UNSHADOW, ctx=ast.Load()), node), args=[], keywords=[]), node)
            return [node, _at(ast.Expr(value=call), node)]
        inner = scope
        if isinstance(node, ast.FunctionDef):
            inner = "sync"
        elif isinstance(node, ast.AsyncFunctionDef):
            inner = "async"
        elif isinstance(node, ast.ClassDef):
            inner = "class"
        for field in _BODIES:
            body = getattr(node, field, None)
            if body:
                setattr(node, field, self.stmts(body, inner))
        for part in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
            part.body = self.stmts(part.body, inner)
        return [node]

    def expr_stmt(self, node: ast.Expr, scope: str) -> ast.Expr:
        if node is self.last:
            node.value = _wrap(LAST, node.value, self.edits)
        elif scope != "async" and not isinstance(node.value, (ast.Constant, ast.Await, ast.Yield, ast.YieldFrom)):
            # Statements inside `async def` stay deferred so gather() can batch them.
            node.value = _wrap(SETTLE, node.value, self.edits)
        return node


def _wrap_awaits(tree: ast.AST, edits: Edits) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Await):
            node.value = _wrap(AWAIT, node.value, edits)


def rewrite(tree: ast.Module, capture_last: bool, source: str | None = None) -> tuple:
    """(tree, edits); `source` lets a block without `await` skip the expression walk."""
    edits = Edits()
    if source is None or "await" in source:
        _wrap_awaits(tree, edits)  # before the statement pass, which adds awaits of its own
    last = tree.body[-1] if capture_last and tree.body and isinstance(tree.body[-1], ast.Expr) else None
    tree.body = _Settler(last, edits).stmts(tree.body, "module")
    return tree, edits


def compile_block(tree: ast.Module, edits: Edits, filename: str, source: str):
    """A block the rewrite left alone compiles from its text: several times cheaper than
    converting an AST object back for tiny blocks, and the same code."""
    return compile(tree if edits else source, filename, "exec", flags=FLAGS, dont_inherit=True)


def module_level(tree: ast.Module):
    """Statements that execute at module scope (into compound statements, not functions)."""
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if children:
                stack.extend(reversed(children))
