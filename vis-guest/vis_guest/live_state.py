"""What the session holds right now, for the note a compaction leaves the model: its own functions
and classes with their signatures, and the other names it created with their types. The model
reads this instead of the folded iterations, so it must name what exists, not what was said."""

import inspect
import types

from . import tools
from .block import user_names
from .helpers import session_defs

# A session can hold thousands of names (a star import); the note stays short.
MAX_NAMES = 200


def _type_text(value) -> str:
    kind = type(value)
    name = kind.__qualname__
    module = getattr(kind, "__module__", "builtins")
    text = name if module in ("builtins", "__main__") else f"{module.split('.')[0]}.{name}"
    try:
        if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)):
            text += f" (len {len(value)})"
        else:
            shape = getattr(value, "shape", None)
            if isinstance(shape, tuple):
                text += f" (shape {shape})"
    except Exception:  # noqa: BLE001 - a user's __len__ may raise anything; the type is enough
        pass
    return text


def take(rt) -> dict:
    mine = session_defs(rt)
    functions, classes, variables, modules = [], [], [], []
    names = [n for n in user_names(rt) if n not in rt.tools]
    for name in names[:MAX_NAMES]:
        value = rt.globals.get(name)
        if name in mine:
            entry = f"{name}{tools.signature_text(value)}"
            (classes if inspect.isclass(value) else functions).append(entry)
        elif isinstance(value, types.ModuleType):
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
