"""Realises extension files in a trusted worker and calls into them for the host.

Called by the host through the worker's ``run`` op: every argument and result is JSON.
An extension is realised from the source text the host hands over (the last version that
loaded), so a later broken edit on disk never replaces a working version by accident."""

import hashlib
import inspect
import os
import sys
import traceback
import types

from vis._state import _set_current

from .sealing import LoadError, check_crossable, seal, signature_text

# key -> {"sha", "manifest", "table", "module"}
_loaded = {}


def _under(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _module_files(mod):
    f = getattr(mod, "__file__", None)
    if f:
        yield os.path.abspath(f)
    for p in getattr(mod, "__path__", None) or []:
        yield os.path.abspath(p)


def _purge(root, keep_prefix="_vis_ext_"):
    """Forgets modules imported from under root, so an edited helper is read again."""
    for name, mod in list(sys.modules.items()):
        if name.startswith(keep_prefix) or mod is None:
            continue
        if any(_under(f, root) for f in _module_files(mod)):
            del sys.modules[name]


_path_dirs = []

# Entries of the vis home's extension folder the host left out because a sandbox can write what
# they are (a link into a session's root): not extensions, and not importable as helpers either,
# though their folder is on sys.path. Paths as written and real; the host sends them with each spec.
_refused = []


class _RefusedFinder:
    """Refuses an import that would read a module from a refused entry, before any other finder."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if not _refused:
            return None
        import importlib.machinery

        found = importlib.machinery.PathFinder.find_spec(name, path)
        if found is None:
            return None
        where = [found.origin] if found.origin else []
        where += list(found.submodule_search_locations or [])
        for w in where:
            for p in (os.path.abspath(w), os.path.realpath(w)):
                if any(_under(p, r) for r in _refused):
                    raise ImportError(
                        f"{name} ({w}) is not imported: it leads where a sandbox can write (ext.source-writable)"
                    )
        return None

    @staticmethod
    def invalidate_caches():
        return None


def _use_refused(spec):
    _refused[:] = list(spec.get("refused") or [])
    if _refused and not any(f is _RefusedFinder for f in sys.meta_path):
        sys.meta_path.insert(0, _RefusedFinder)


def _use_dirs(dirs):
    """Extension directories on sys.path (project first), so packages beside a file import.
    Directories of an earlier load (another project, or an earlier trusted copy of this one)
    leave the path, and so do the modules imported from them: a project's trusted copy is named
    by its content, so an edited helper arrives as a new directory."""
    for d in _path_dirs:
        if d not in dirs:
            _purge(d)
    for d in _path_dirs + list(dirs):
        while d in sys.path:
            sys.path.remove(d)
    _path_dirs[:] = list(dirs)
    sys.path[0:0] = _path_dirs


def _where(exc, spec):
    """' (file.py, line N)' for the innermost frame inside the extension, if any."""
    root = spec["dir"] if spec["kind"] == "package" else spec["path"]
    found = ""
    for fs in traceback.extract_tb(exc.__traceback__):
        if fs.filename and _under(os.path.abspath(fs.filename), root):
            found = f" ({os.path.basename(fs.filename)}, line {fs.lineno})"
    if isinstance(exc, SyntaxError) and exc.lineno:
        found = f" ({os.path.basename(exc.filename or spec['path'])}, line {exc.lineno})"
    return found


def _version(spec, source):
    """Names what will run: the registering file and, for a package, every module in it,
    so a live session realises the package again when only a helper changed."""
    h = hashlib.sha256(source.encode())
    if spec["kind"] == "package":
        for base, dirs, files in os.walk(spec["dir"]):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                path = os.path.join(base, name)
                if name.endswith(".py") and path != spec["path"]:
                    with open(path, "rb") as f:
                        h.update(path.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def _module_for(spec):
    """A fresh module object to execute the extension's source in."""
    key = spec["key"]
    if spec["kind"] == "package":
        pkg_dir = spec["dir"]
        pkg_name = os.path.basename(pkg_dir)
        _purge(pkg_dir)
        pkg = types.ModuleType(pkg_name)
        pkg.__path__ = [pkg_dir]
        pkg.__file__ = os.path.join(pkg_dir, "__init__.py")
        pkg.__package__ = pkg_name
        sys.modules[pkg_name] = pkg
        init = os.path.join(pkg_dir, "__init__.py")
        if os.path.isfile(init):
            with open(init, encoding="utf-8") as f:
                exec(compile(f.read(), init, "exec"), pkg.__dict__)
        mod = types.ModuleType(f"{pkg_name}.extension")
        mod.__package__ = pkg_name
        sys.modules[mod.__name__] = mod
    else:
        mod = types.ModuleType(f"_vis_ext_{spec['scope']}_{key}")
        mod.__package__ = ""
        sys.modules[mod.__name__] = mod
    mod.__file__ = spec["path"]
    return mod


def _realise(spec):
    key = spec["key"]
    _use_refused(spec)
    source = spec.get("source")
    if source is None:
        with open(spec["path"], encoding="utf-8") as f:
            source = f.read()
    sha = _version(spec, source)
    have = _loaded.get(key)
    if have and have["sha"] == sha:
        return have
    import vis._extension as decl

    decl._take_registered()
    mod = _module_for(spec)
    # vis.state is per registered name, unknown until the file registers: not at import.
    prev = _set_current(None)
    try:
        exec(compile(source, spec["path"], "exec"), mod.__dict__)
    finally:
        _set_current(prev)
    registered = decl._take_registered()
    if not registered:
        raise LoadError("the file never calls vis.register(vis.Extension(...))")
    if len(registered) > 1:
        raise LoadError(f"the file registers {len(registered)} extensions; one file registers one")
    manifest, table = seal(registered[0])
    entry = {"sha": sha, "source": source, "manifest": manifest, "table": table, "module": mod}
    _loaded[key] = entry
    return entry


def _answer(entry):
    return {"ok": True, "manifest": entry["manifest"], "sha": entry["sha"], "source": entry["source"]}


def prepare(dirs):
    """Starts a full load in the registration worker: edited helpers are read afresh."""
    # Also the directories of the previous load: another project's helpers must not be
    # found in the module cache under the same name.
    for d in set(_path_dirs) | set(dirs):
        _purge(d)
    _use_dirs(dirs)
    _loaded.clear()


def load_one(spec):
    """Loads one discovered file: its sealed manifest, or why it did not load."""
    try:
        return _answer(_realise(spec))
    except LoadError as e:
        return {"ok": False, "error": str(e)}
    except (Exception, SystemExit) as e:
        return {"ok": False, "error": f"{type(e).__name__}: {e}{_where(e, spec)}"}


def realise(dirs, spec, project=None):
    """Makes sure the given version of one extension is live here (a session's worker)."""
    _use_dirs(dirs)
    if project and os.path.isdir(project) and os.getcwd() != project:
        os.chdir(project)
    entry = _realise(spec)
    return {"name": entry["manifest"]["name"], "sha": entry["sha"]}


def _bind(fn, args):
    """Positional args from the sandbox; keyword args arrive folded into a trailing dict."""
    sig = inspect.signature(fn)
    if args and isinstance(args[-1], dict) and all(isinstance(k, str) for k in args[-1]):
        kwargs = args[-1]
        names = set(sig.parameters)
        takes_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
        if kwargs and (takes_kw or set(kwargs) <= names):
            try:
                sig.bind(*args[:-1], **kwargs)
                return args[:-1], kwargs
            except TypeError:
                pass
    try:
        sig.bind(*args)
    except TypeError as e:
        raise TypeError(f"{fn.__name__}{signature_text(fn)}: {e}") from None
    return args, {}


def _run(key, fn, args, kwargs):
    prev = _set_current(_loaded[key]["manifest"]["name"])
    try:
        return fn(*args, **kwargs)
    finally:
        _set_current(prev)


def _entry(key):
    entry = _loaded.get(key)
    if entry is None:
        raise RuntimeError(f"extension {key!r} is not realised in this worker")
    return entry


def call(key, kind, name, args):
    """Calls tool or slash command `name` of extension `key` with JSON args."""
    entry = _entry(key)
    fn = entry["table"][kind].get(name)
    if fn is None:
        raise LookupError(f"extension {entry['manifest']['name']!r} has no {kind} named {name!r}")
    a, kw = _bind(fn, list(args))
    value = _run(key, fn, a, kw)
    check_crossable(value, f"the result of {entry['manifest']['alias']}_{name}")
    return value


def hook(key, index, args, result=None):
    """Runs one op hook: {"refused": message or None}."""
    import vis

    entry = _entry(key)
    h = entry["table"]["hooks"][index]
    try:
        out = _run(key, h.fn, [args] if h.when == "before" else [args, result], {})
    except vis.Refuse as e:
        return {"refused": str(e) or f"refused by extension {entry['manifest']['name']}"}
    return {"refused": out if isinstance(out, str) and out else None}


def ctx(key):
    """The extension's slice of the session dict."""
    entry = _entry(key)
    c = entry["table"]["ctx"]
    value = _run(key, c, [], {}) if callable(c) else c
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"ctx of {entry['manifest']['name']!r} returned {type(value).__name__}, not a dict")
    check_crossable(value, "ctx")
    return value


def pid():
    return os.getpid()
