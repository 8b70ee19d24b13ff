"""What the guest's Python reads and writes of the worker wire, read from its source.

Run by test/protocol/guest-wire.test.ts, which compares the answer with the host's schemas
(src/protocol/parent-requests.ts, src/protocol/run-block.ts). Usage: guest_wire_keys.py ROOT
(ROOT holds vis_worker/ and vis_guest/); prints one JSON object:
  ops      each work op the interpreter thread serves -> the message keys its handler reads
  request  the run-block request's keys the guest reads
  fields   the run-block fields the guest accepts (vis_worker/ops.py RUN_BLOCK_FIELDS)
  outcome  the keys the guest writes into a block's outcome
  survived the keys the guest reads of session['survived'] (what the last stop left)
"""

import ast
import json
import sys
from pathlib import Path


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def const_str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def subscript_key(node, name: str, ctx: type) -> str | None:
    """ "k" when `node` is name["k"] used as `ctx` (ast.Load or ast.Store)."""
    if isinstance(node, ast.Subscript) and is_name(node.value, name) and isinstance(node.ctx, ctx):
        return const_str(node.slice)
    return None


def keys_read(tree: ast.AST, name: str) -> set[str]:
    """Keys read of the dict held in `name`: name["k"], name.get("k"), name.pop("k"), "k" in name."""
    found: set[str] = set()
    for node in ast.walk(tree):
        key = subscript_key(node, name, ast.Load)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if is_name(node.func.value, name) and node.func.attr in ("get", "pop") and node.args:
                key = const_str(node.args[0])
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            if is_name(node.comparators[0], name):
                key = const_str(node.left)
        if key is not None:
            found.add(key)
    return found


def keys_written(tree: ast.AST, name: str, returning: tuple[str, ...]) -> set[str]:
    """Keys stored into `name` (name["k"] = ...), and of dict literals the functions in
    `returning` return."""
    found: set[str] = set()
    for node in ast.walk(tree):
        key = subscript_key(node, name, ast.Store)
        if key is not None:
            found.add(key)
        elif isinstance(node, ast.FunctionDef) and node.name in returning:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                    found.update(k for k in map(const_str, ret.value.keys) if k is not None)
    return found


def functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def work_ops(ops: ast.Module) -> dict[str, list[str]]:
    """OPS = {"op": handler, ...}: a handler is a function reading `msg`, or _guest(api_fn, key)."""
    defs = functions(ops)
    table = next(
        n.value
        for n in ops.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPS" for t in n.targets)
    )
    out: dict[str, list[str]] = {}
    for k, v in zip(table.keys, table.values, strict=True):
        op = const_str(k)
        if isinstance(v, ast.Name):
            out[op] = sorted(keys_read(defs[v.id], "msg"))
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "_guest":
            out[op] = [const_str(v.args[1])]
    return out


def constant_strings(tree: ast.Module, name: str) -> list[str]:
    """The string constants in the value assigned to module-level `name`."""
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            return sorted(k for k in map(const_str, ast.walk(n.value)) if k is not None)
    return []


def main() -> None:
    root = Path(sys.argv[1])
    ops = parse(root / "vis_worker" / "ops.py")
    block = parse(root / "vis_guest" / "block.py")
    api = parse(root / "vis_guest" / "api.py")
    run_block = functions(ops)["_run_block"]
    request = keys_read(run_block, "request") | keys_read(block, "request") | keys_read(api, "request")
    outcome = keys_written(block, "outcome", ("run", "interrupted"))
    survived = keys_read(block, "survived")
    answer = {
        "ops": work_ops(ops),
        "request": sorted(request),
        "fields": constant_strings(ops, "RUN_BLOCK_FIELDS"),
        "outcome": sorted(outcome),
        "survived": sorted(survived),
    }
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
