"""Bound tools: callables that return deferred calls, living in builtins so a block's
assignment only shadows them (in globals) and the runtime can drop the shadow afterwards."""

import ast
import inspect

from .deferred import DeferredCall

_EMPTY = inspect.Parameter.empty


def parse_signature(text: str | None) -> inspect.Signature | None:
    """'(path, n=None)' -> inspect.Signature; defaults are literals or shown as written."""
    if not text:
        return None
    try:
        fn = ast.parse(f"def _f{text}: pass").body[0]
    except SyntaxError:
        return None
    a = fn.args
    params = []
    P = inspect.Parameter

    class _Shown:
        def __init__(self, src):
            self.src = src

        def __repr__(self):
            return self.src

    def default(node):
        if node is None:
            return _EMPTY
        try:
            return ast.literal_eval(node)
        except ValueError:
            return _Shown(ast.unparse(node))

    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, d) in enumerate(zip(positional, defaults, strict=True)):
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(arg.arg, kind, default=default(d)))
    if a.vararg:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=default(d)))
    if a.kwarg:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    try:
        return inspect.Signature(params)
    except ValueError:
        return None


class Tool:
    """Calls are positional; keyword arguments fold into one trailing dict."""

    def __init__(self, name: str, call_name: str, doc: str | None, signature: str | None):
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = doc or ""
        self._call_name = call_name
        self._signature_text = signature or "(*args)"
        sig = parse_signature(signature)
        if sig is not None:
            self.__signature__ = sig

    def __call__(self, *args, **kwargs):
        payload = list(args)
        if kwargs:
            payload.append(kwargs)
        return DeferredCall(self._call_name, payload)

    def __repr__(self):
        return f"<tool {self.__name__}{self._signature_text}>"


class Namespace:
    """A tool group (`git.status()`): attributes are tools, the rest is plain data."""

    def __init__(self, name: str, doc: str | None):
        self.__name__ = name
        self.__doc__ = doc or ""

    def __repr__(self):
        members = sorted(k for k in vars(self) if not k.startswith("_"))
        return f"<tools {self.__name__}: {', '.join(members)}>"


def build(spec: dict):
    """A tool spec from the host -> the object bound under spec['name']."""
    name = spec["name"]
    kind = spec.get("kind", "tool")
    if kind == "data":
        return spec.get("value")
    if kind == "namespace":
        ns = Namespace(name, spec.get("doc"))
        for m in spec.get("methods") or []:
            call_name = m.get("call") or f"{name}.{m['name']}"
            setattr(ns, m["name"], Tool(f"{name}.{m['name']}", call_name, m.get("doc"), m.get("signature")))
        return ns
    return Tool(name, spec.get("call") or name, spec.get("doc"), spec.get("signature"))


def signature_text(obj) -> str:
    if isinstance(obj, Tool):
        return obj._signature_text
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
