"""Pure-Python modules trusted extensions declare (vis.Extension(sandbox_modules=...)),
importable in the sandbox. Their source lives in this finder, not in a file the block could
write; installing a new set (an extension reload) replaces what changed and forgets what is
gone, so the next `import` gets the new version."""

import importlib.abc
import importlib.util
import linecache
import sys

_sources: dict = {}


class _Loader(importlib.abc.Loader):
    def __init__(self, name: str):
        self.name = name

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = _sources[self.name]
        filename = f"<sandbox module {self.name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module.__file__ = filename
        exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - extension code, sandboxed

    def get_source(self, name):
        return _sources.get(name)


class _Finder(importlib.abc.MetaPathFinder):
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _sources:
            return None
        package = any(other.startswith(name + ".") for other in _sources)
        return importlib.util.spec_from_loader(name, _Loader(name), is_package=package)


def install(modules: dict) -> dict:
    """Makes exactly `modules` ({name: source}) importable; returns what changed."""
    if not isinstance(modules, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in modules.items()):
        raise TypeError("install: {module name: source text}")
    changed = sorted(n for n in set(_sources) | set(modules) if _sources.get(n) != modules.get(n))
    _sources.clear()
    _sources.update(modules)
    for name in changed:
        sys.modules.pop(name, None)
    if _sources and _Finder not in sys.meta_path:
        # After the builtin and frozen finders, before the path: a file in a root cannot
        # stand in for an extension's module.
        at = next((i for i, f in enumerate(sys.meta_path) if getattr(f, "__name__", "") == "PathFinder"), 0)
        sys.meta_path.insert(at, _Finder)
    return {"modules": sorted(_sources), "changed": changed}
