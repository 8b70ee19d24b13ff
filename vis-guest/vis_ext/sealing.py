"""Checks an extension's declaration and turns it into sealed JSON data for the host.

Only data leaves the trusted worker: names, docs, signature text, metadata. Functions
stay here and are addressed by name (tools) or index (hooks)."""

import inspect
import keyword
import re
import sys

import vis
from vis._extension import Hook

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class LoadError(Exception):
    """A declaration the host cannot offer; the message says which field and why."""


def check_crossable(value, where):
    """Raises LoadError/TypeError naming the key path of the first value JSON cannot carry."""

    def walk(v, at):
        if v is None or isinstance(v, (bool, str)):
            return
        if isinstance(v, int):
            return
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise TypeError(f"{where}{at}: {v!r} cannot cross as JSON")
            return
        if isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, f"{at}[{i}]")
            return
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"{where}{at}: key {k!r} is not a string")
                walk(x, f"{at}[{k!r}]")
            return
        raise TypeError(f"{where}{at}: a {type(v).__name__} cannot cross as JSON")

    walk(value, "")


def signature_text(fn):
    """The sandbox-side signature: parameter names and defaults, no annotations."""
    sig = inspect.signature(fn)
    clean = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=clean, return_annotation=inspect.Signature.empty))


def _ident(value, field):
    if not isinstance(value, str) or not _IDENT.match(value) or keyword.iskeyword(value):
        raise LoadError(f"{field} must be a Python identifier, got {value!r}")
    return value


def _text(value, field, optional=False):
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise LoadError(f"{field} must be a string, got {type(value).__name__}")
    return value


def _functions(items, field):
    """tools/slash_commands: a list of documented functions, each name once."""
    if isinstance(items, dict):
        pairs = list(items.items())
    elif isinstance(items, (list, tuple)):
        pairs = [(getattr(f, "__name__", None), f) for f in items]
    else:
        raise LoadError(f"{field} must be a list of functions, got {type(items).__name__}")
    out = {}
    for name, fn in pairs:
        if not callable(fn):
            raise LoadError(f"{field}: {fn!r} is not a function")
        _ident(name, f"{field} name")
        if name in out:
            raise LoadError(f"{field}: {name!r} is declared twice")
        doc = inspect.getdoc(fn)
        if not doc or not doc.strip():
            raise LoadError(f"{field}: {name!r} has no docstring; the model reads it to know what the tool does")
        try:
            sig = signature_text(fn)
        except (TypeError, ValueError) as e:
            raise LoadError(f"{field}: {name!r} has no readable signature ({e})") from None
        out[name] = {"name": name, "doc": doc, "signature": sig, "fn": fn}
    return out


# All sandbox modules of one extension together, as source text.
MAX_SANDBOX_SOURCE = 1 << 20
_RUNTIME_MODULES = ("vis", "_vis", "vis_guest", "vis_worker", "vis_ext")


def _sandbox_modules(mods):
    """{name: source}: dotted identifiers, never a stdlib or runtime module, source that compiles."""
    if mods is None:
        return {}
    if not isinstance(mods, dict):
        raise LoadError(f"sandbox_modules must be a dict of module name to source, got {type(mods).__name__}")
    out = {}
    total = 0
    for name, source in mods.items():
        if not isinstance(name, str) or not all(_IDENT.match(p) and not keyword.iskeyword(p) for p in name.split(".")):
            raise LoadError(f"sandbox_modules: {name!r} is not a module name")
        top = name.split(".")[0]
        if top in _RUNTIME_MODULES or top in sys.stdlib_module_names:
            owner = "runtime" if top in _RUNTIME_MODULES else "standard library"
            raise LoadError(f"sandbox_modules: {name!r} would shadow the {owner} module {top!r}")
        if not isinstance(source, str):
            raise LoadError(f"sandbox_modules[{name!r}] must be Python source text, got {type(source).__name__}")
        total += len(source.encode())
        if total > MAX_SANDBOX_SOURCE:
            raise LoadError(f"sandbox_modules: more than {MAX_SANDBOX_SOURCE} bytes of source")
        try:
            compile(source, f"<sandbox module {name}>", "exec")
        except SyntaxError as e:
            raise LoadError(f"sandbox_modules[{name!r}] does not compile: {e.msg} (line {e.lineno})") from None
        out[name] = source
    return out


def seal(ext):
    """(manifest for the host, private table of callables)."""
    if not isinstance(ext, vis.Extension):
        raise LoadError("vis.register() must be given a vis.Extension")
    name = _text(ext.name, "name")
    if not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$", name):
        raise LoadError(f"name must be 1-100 letters, digits, '_', '-' or '.', got {name!r}")
    alias = ext.alias if ext.alias is not None else name.replace("-", "_").replace(".", "_")
    _ident(alias, "alias")
    activation = ext.activation
    if activation is not None and not isinstance(activation, str):
        if not (isinstance(activation, (list, tuple)) and all(isinstance(a, str) for a in activation)):
            raise LoadError("activation must be a string or a list of strings")
        activation = list(activation)
    tools = _functions(ext.tools, "tools")
    slash = _functions(ext.slash_commands, "slash_commands")
    if not isinstance(ext.op_hooks, (list, tuple)):
        raise LoadError("op_hooks must be a list of vis.before(...)/vis.after(...) hooks")
    hooks = []
    for i, h in enumerate(ext.op_hooks):
        if not isinstance(h, Hook) or h.when not in ("before", "after") or not callable(h.fn):
            raise LoadError(f"op_hooks[{i}] must be vis.before(tool, fn) or vis.after(tool, fn), got {h!r}")
        _text(h.tool, f"op_hooks[{i}].tool")
        hooks.append(h)
    ctx = ext.ctx
    ctx_kind = None
    if ctx is not None:
        if isinstance(ctx, dict):
            try:
                check_crossable(ctx, "ctx")
            except TypeError as e:
                raise LoadError(str(e)) from None
            ctx_kind = "data"
        elif callable(ctx):
            ctx_kind = "function"
        else:
            raise LoadError("ctx must be a dict with string keys or a function returning one")
    manifest = {
        "name": name,
        "description": _text(ext.description, "description"),
        "version": _text(ext.version, "version"),
        "alias": alias,
        "prompt": _text(ext.prompt, "prompt", optional=True),
        "activation": activation,
        "tools": [{k: v for k, v in t.items() if k != "fn"} for t in tools.values()],
        "slash_commands": [{k: v for k, v in t.items() if k != "fn"} for t in slash.values()],
        "op_hooks": [{"index": i, "when": h.when, "tool": h.tool} for i, h in enumerate(hooks)],
        "ctx": ctx_kind,
        "ctx_data": ctx if ctx_kind == "data" else None,
        "sandbox_modules": _sandbox_modules(getattr(ext, "sandbox_modules", None)),
    }
    table = {
        "tool": {n: t["fn"] for n, t in tools.items()},
        "slash": {n: t["fn"] for n, t in slash.items()},
        "hooks": hooks,
        "ctx": ctx,
    }
    return manifest, table
