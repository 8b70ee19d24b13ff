"""doc(), apropos() and defs(): how a model finds its tools and its own helpers."""

import inspect
import re

from . import packages, surface, tools

RUNTIME_HELPERS = ("doc", "apropos", "defs", "gather", "vis_attach", "vis_attach_bytes", "network_probe")


def _gist(text: str | None) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 100 else line[:97] + "..."


def session_defs(rt) -> dict:
    """The session's own functions and classes, by name, in definition order."""
    out = {}
    for name, value in list(rt.globals.items()):
        if name.startswith("__") or name in rt.tools:
            continue
        if inspect.isfunction(value) and value.__code__.co_filename.startswith("<vis-block-"):
            out[name] = value
        elif inspect.isclass(value) and rt.registry.get(name, {}).get("kind") == "class":
            out[name] = value
    return out


def _entries(rt):
    """(name, signature, doc, kind) for everything a model can look up."""
    for name, obj in rt.tools.items():
        if isinstance(obj, tools.Tool):
            yield name, obj._signature_text, obj.__doc__, "tool"
        elif isinstance(obj, tools.Namespace):
            yield name, "", obj.__doc__, "tools"
            for member in vars(obj).values():
                if isinstance(member, tools.Tool):
                    yield member.__name__, member._signature_text, member.__doc__, "tool"
        else:
            yield name, "", (rt.specs.get(name) or {}).get("doc") or "", "data"
    for name, obj in session_defs(rt).items():
        yield name, tools.signature_text(obj), inspect.getdoc(obj) or "", "yours"
    for name in RUNTIME_HELPERS:
        obj = rt.builtins.get(name)
        if obj is not None:
            yield name, tools.signature_text(obj), inspect.getdoc(obj) or "", "runtime"
    for module, dist, version, summary in packages.installed():
        yield module, "", f"{dist} {version}: {summary}", "package"


def make_helpers(rt):
    def doc(name):
        """Documentation of a tool or helper: doc('grep') or doc(grep)."""
        if not isinstance(name, str):
            name = getattr(name, "__name__", None) or str(name)
        for entry, sig, text, kind in _entries(rt):
            if entry == name:
                return f"{entry}{sig}  [{kind}]\n\n{text}".rstrip()
        if name in ("shell", "subprocess", "os.system", "os.popen"):
            return surface.text(rt)
        about = packages.describe(name)
        if about is not None:
            return about
        if name in rt.removed:
            return f"{name} was a tool and has been removed from this session; see apropos({name!r})"
        obj = rt.globals.get(name, rt.builtins.get(name))
        if obj is not None:
            return f"{name}{tools.signature_text(obj)}\n\n{inspect.getdoc(obj) or ''}".rstrip()
        return f"no tool or helper named {name!r}; search with apropos({name!r})"

    def apropos(query=""):
        """Ranked search over tools, their docs and your own helpers; '' lists everything."""
        words = [w for w in re.split(r"\W+", str(query).lower()) if w]
        scored = []
        for order, (name, sig, text, kind) in enumerate(_entries(rt)):
            hay_name, hay_doc = name.lower(), (text or "").lower()
            score = 0
            for w in words:
                if w == hay_name:
                    score += 100
                elif w in hay_name:
                    score += 40
                if w in hay_doc:
                    score += 10 + min(hay_doc.count(w), 5)
            if words and score == 0:
                continue
            scored.append((-score, order, f"{name}{sig}  [{kind}]  {_gist(text)}".rstrip()))
        if not scored:
            return f"nothing matches {query!r}; apropos('') lists everything"
        return "\n".join(line for _, _, line in sorted(scored))

    def defs(name=None):
        """Your own functions with signature and docstring gist, or one's source: defs('f')."""
        mine = session_defs(rt)
        if name is not None:
            entry = rt.registry.get(name)
            if entry and entry["kind"] in ("function", "class"):
                return entry["source"]
            if name in mine:
                try:
                    return inspect.getsource(mine[name])
                except (OSError, TypeError):
                    pass
            return f"{name!r} is not one of your definitions; defs() lists them"
        if not mine:
            return "no definitions yet"
        return "\n".join(f"{n}{tools.signature_text(o)}  {_gist(inspect.getdoc(o))}".rstrip() for n, o in mine.items())

    return doc, apropos, defs
