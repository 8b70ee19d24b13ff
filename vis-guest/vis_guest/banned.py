"""References refused before a block runs because they tamper with the runtime itself.

The set is small and documented; `exec`/`eval` are NOT in it (they run as module code):
  - importing `_vis` (the host door), `vis_guest` (this runtime) or `vis_worker` (the
    worker's wire handler and the block's stdin);
  - any name or attribute starting with `__vis` (the runtime's settling hooks);
  - `sys.addaudithook` (the sandbox's audit hook is the host's, not the block's)."""

import ast

_MODULES = ("_vis", "vis_guest", "vis_worker")


def _module_banned(name: str | None) -> bool:
    return bool(name) and any(name == m or name.startswith(m + ".") for m in _MODULES)


def may_contain(source: str) -> bool:
    """A text pre-check so the common block skips the AST walk."""
    return "_vis" in source or "vis_guest" in source or "vis_worker" in source or "addaudithook" in source


def check(tree: ast.Module) -> dict | None:
    for node in ast.walk(tree):
        found = None
        if isinstance(node, ast.Import):
            bad = next((a.name for a in node.names if _module_banned(a.name)), None)
            if bad:
                found = f"import {bad}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _module_banned(node.module):
            found = f"from {node.module} import ..."
        elif isinstance(node, ast.Name) and node.id.startswith("__vis"):
            found = node.id
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__vis"):
            found = f".{node.attr}"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "addaudithook"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            found = "sys.addaudithook"
        if found:
            return {
                "name": found,
                "line": getattr(node, "lineno", None),
                "column": getattr(node, "col_offset", 0) + 1,
                "message": f"{found} is refused: it tampers with the runtime that runs your code. "
                "Use the tools (apropos('')) and plain Python instead.",
            }
    return None
