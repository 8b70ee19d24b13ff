"""What the session holds right now, for the note a compaction leaves the model: its own functions
and classes with their signatures, and the other names it created with their types. The model
reads this instead of the folded iterations, so it must name what exists, not what was said."""

import types

from . import tools
from .block import user_names
from .helpers import session_defs

# A session can hold thousands of names (a star import); the note stays short.
MAX_NAMES = 200


# Lengths of these exact types only, shapes of these libraries' arrays only: the note is taken
# between blocks, outside any block's deadline, so it must run none of the session's own code
# (a user's __len__, a property, a __class__ that loops would hold the worker).
_SIZED = (list, tuple, dict, set, frozenset, str, bytes)
_ARRAYS = ("numpy", "pandas", "polars", "torch")


def _type_text(value) -> str:
    kind = type(value)
    name = type.__getattribute__(kind, "__qualname__")
    module = type.__getattribute__(kind, "__module__") or "builtins"
    root = module.split(".")[0]
    text = name if module in ("builtins", "__main__") else f"{root}.{name}"
    if any(kind is t for t in _SIZED):
        text += f" (len {len(value)})"
    elif root in _ARRAYS:
        try:
            shape = value.shape
        except Exception:  # noqa: BLE001 - a library object without a shape is named by its type
            shape = None
        if isinstance(shape, tuple):
            text += f" (shape {shape})"
    return text


def take(rt) -> dict:
    mine = session_defs(rt)
    functions, classes, variables, modules = [], [], [], []
    names = [n for n in user_names(rt) if n not in rt.tools]
    for name in names[:MAX_NAMES]:
        value = rt.globals.get(name)
        if name in mine:
            entry = f"{name}{tools.signature_text(value)}"
            (classes if issubclass(type(value), type) else functions).append(entry)
        elif type(value) is types.ModuleType:
            modules.append(name)
        elif not name.startswith("_"):
            variables.append({"name": name, "type": _type_text(value)})
    return {
        "functions": functions,
        "classes": classes,
        "variables": variables,
        "modules": modules,
        "omitted": max(0, len(names) - MAX_NAMES),
    }
