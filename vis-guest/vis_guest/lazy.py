"""Work to do on a module once it is imported, without importing it first.

asyncio alone (with ssl, subprocess, concurrent.futures and logging behind it) is a
quarter of an idle worker's Python memory, and most blocks never touch it. The runtime's
asyncio and subprocess patches wait here until a block (or the runtime) imports them."""

import sys

_pending: dict = {}  # module name -> [callback(module), ...]


class _Finder:
    """A one-shot meta path entry: it finds nothing itself; it asks the finders after it
    and makes the loader they return run the callbacks after the module's own code."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in _pending:
            return None
        for finder in sys.meta_path:
            if finder is _Finder or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _fire(name, module)

        # The loader object is this module's own (one per spec), so shadowing its method
        # touches nothing else; everything else about it (get_source...) stays as it was.
        loader.exec_module = exec_module
        return spec


def _fire(name: str, module) -> None:
    for callback in _pending.pop(name, ()):
        callback(module)
    if not _pending and _Finder in sys.meta_path:
        sys.meta_path.remove(_Finder)


def when_imported(name: str, callback) -> None:
    """callback(module) now if `name` is imported already, else right after its import."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    _pending.setdefault(name, []).append(callback)
    if _Finder not in sys.meta_path:
        sys.meta_path.insert(0, _Finder)
