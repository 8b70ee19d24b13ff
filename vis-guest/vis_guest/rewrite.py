"""The AST rewrite a block (and a restored snapshot) goes through before compiling.

The block compiles as MODULE code with PyCF_ALLOW_TOP_LEVEL_AWAIT rather than inside an
explicit `async def` wrapper: the interpreter then keeps every module-scope binding (any
statement, any nesting, walrus, `del`, `import *`, `from __future__`, annotations, `locals()`)
in the session globals by itself, and rejects top-level `return`/`yield`/`nonlocal` at the
user's own line. A code object that awaits comes out flagged CO_COROUTINE, and evaluating
it yields ONE coroutine that our scheduler drives. The rewrite only adds settling calls, and
promotes a plain `def` that awaits to `async def`.

Where a deferred tool call settles (docs/ARCHITECTURE.md, "Settling"):
  - a top-level statement of the block: a bare call, `x = ...`, `x: T = ...`, `x += ...` and
    unpacking settle the value in place: a call, or a name, subscript or attribute that may
    hold a deferred call already (`first = results[0]`);
  - a statement at any depth inside if/for/while/with/try/match, a plain def or a class body:
    the same, but only where the value is a call (or `a or b` / `a if c else b`), so hot loops
    of arithmetic pay nothing;
  - a statement inside `async def` stays deferred, so `t = tool(); await gather(t, u)` batches;
  - `return <expr>` settles in any function, calls one or two container levels deep included;
  - expression positions (arguments, list elements, comprehensions) stay deferred: at module
    level `await gather(*[grep(q) for q in qs])` batches because the calls sit inside the
    gather expression, not in a statement of their own. The block compiles as a coroutine
    for its top-level awaits, but its statements are module-level statements all the same."""

import ast

FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
SETTLE, LAST, AWAIT, ASETTLE = "__vis_settle__", "__vis_last__", "__vis_await__", "__vis_asettle__"
RETURN, PROMOTED = "__vis_return__", "__vis_promoted__"
UNSHADOW = "__vis_unshadow__"

# Values a nested assignment settles: the ones that can evaluate to a deferred call.
_MAYBE_CALL = (ast.Call, ast.BoolOp, ast.IfExp)
# A top-level assignment also settles what may hold one already (`first = results[0]`).
# Arithmetic, comparisons, literals and `await` never leave a deferred call at the top.
_MAYBE_HELD = (*_MAYBE_CALL, ast.Subscript, ast.Attribute, ast.Name, ast.NamedExpr)
# Python builtins that never return a deferred call (unlike next(), getattr(), min(), which
# may hand one back): `n = len(x)` needs no settle, which keeps hot loops free of it and lets
# a block with nothing else to rewrite compile from its text.
_PLAIN_CALLS = frozenset(
    "abs all any ascii bin bool bytearray bytes callable chr complex dict dir divmod enumerate filter "
    "float format frozenset hasattr hash hex id int isinstance issubclass len list map object oct ord "
    "pow print range repr reversed round set slice sorted str sum tuple type vars zip".split()
)
_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _settles(value: ast.expr, top: bool) -> bool:
    """Does an assignment of this value get a settle call?"""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _PLAIN_CALLS:
        return False
    return isinstance(value, _MAYBE_HELD if top else _MAYBE_CALL)


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

    def __init__(self, last: ast.stmt | None, edits: Edits, may_await: bool):
        self.last = last
        self.edits = edits
        self.may_await = may_await

    def stmts(self, body: list, scope: str, top: bool = False) -> list:
        out = []
        for node in body:
            out.extend(self.stmt(node, scope, top))
        return out

    def stmt(self, node: ast.stmt, scope: str, top: bool = False) -> list:
        if isinstance(node, ast.Expr):
            return [self.expr_stmt(node, scope)]
        if isinstance(node, _ASSIGNS):
            if node.value is not None and scope != "async":
                self.assign(node, top)
            return [node]
        if isinstance(node, ast.Return):
            if node.value is not None:
                if scope == "async":
                    node.value = _at(ast.Await(value=_wrap(ASETTLE, node.value, self.edits)), node.value)
                else:
                    node.value = _wrap(RETURN, node.value, self.edits)
            return [node]
        if isinstance(node, ast.FunctionDef) and self.may_await and _awaits(node):
            node = _promote(node, self.edits)
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

    def assign(self, node, top: bool) -> None:
        value = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(value, (ast.Tuple, ast.List)) and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
            # `a, b = cat(x), cat(y)`: each element lands in its own name, so each settles.
            value.elts = [_wrap(SETTLE, e, self.edits) if _settles(e, top) else e for e in value.elts]
        elif _settles(value, top):
            node.value = _wrap(SETTLE, value, self.edits)


def _awaits(fn: ast.FunctionDef) -> bool:
    """Does this plain def await in its own body (not in a nested function or class)?"""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if isinstance(node, _SCOPES):
            stack.extend(getattr(node, "decorator_list", ()))  # these run in the outer scope
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _promote(fn: ast.FunctionDef, edits: Edits) -> ast.AsyncFunctionDef:
    """A plain def that awaits becomes `async def`; the marker makes its calls deferred runs,
    which settle where a tool call would (a statement runs it, as the model meant by `def`)."""
    edits.add()
    fields = {f: getattr(fn, f) for f in fn._fields}
    fields["decorator_list"] = [*fn.decorator_list, _at(ast.Name(id=PROMOTED, ctx=ast.Load()), fn)]
    new = ast.AsyncFunctionDef(**fields)
    ast.copy_location(new, fn)
    new.end_lineno, new.end_col_offset = fn.end_lineno, fn.end_col_offset
    return new


def _wrap_awaits(tree: ast.AST, edits: Edits) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Await):
            node.value = _wrap(AWAIT, node.value, edits)


def rewrite(tree: ast.Module, capture_last: bool, source: str | None = None) -> tuple:
    """(tree, edits); `source` lets a block without `await` skip the expression walk."""
    edits = Edits()
    may_await = source is None or "await" in source or "async" in source
    if source is None or "await" in source:
        _wrap_awaits(tree, edits)  # before the statement pass, which adds awaits of its own
    last = tree.body[-1] if capture_last and tree.body and isinstance(tree.body[-1], ast.Expr) else None
    tree.body = _Settler(last, edits, may_await).stmts(tree.body, "module", top=True)
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
