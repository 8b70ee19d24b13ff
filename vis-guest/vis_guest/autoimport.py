"""Names every block can use without importing; they live in builtins, never in globals.

Modules not yet loaded are bound as lazy stand-ins that import on first attribute access and
then put the real module in their place; classes (Counter, Path) are bound eagerly, because a
stand-in would break isinstance()."""

import importlib
import sys
import types

MODULES = (
    "json",
    "re",
    "os",
    "sys",
    "time",
    "shlex",
    "hashlib",
    "glob",
    "collections",
    "pathlib",
    "textwrap",
    "base64",
    "math",
    "socket",
    "datetime",
)


class LazyModule(types.ModuleType):
    def __init__(self, name: str, bind):
        super().__init__(name)
        self.__dict__["_vis_bind"] = bind

    def _vis_load(self):
        mod = importlib.import_module(self.__name__)
        self.__dict__["_vis_bind"](self.__name__, mod)
        return mod

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__file__", "__path__", "__all__"):
            raise AttributeError(attr)
        return getattr(self._vis_load(), attr)

    def __dir__(self):
        return dir(self._vis_load())

    def __repr__(self):
        return f"<module {self.__name__!r} (imported on first use)>"


def install(rt) -> None:
    def bind(name, mod):
        if rt.builtins.get(name) is not mod:
            rt.set_builtin(name, mod)

    for name in MODULES:
        mod = sys.modules.get(name)
        rt.set_builtin(name, mod if mod is not None else LazyModule(name, bind))
    from collections import Counter
    from pathlib import Path

    rt.set_builtin("Counter", Counter)
    rt.set_builtin("Path", Path)
