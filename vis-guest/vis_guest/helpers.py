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


# At equal match what the session gives the model comes first: tools, then its own helpers
# and the runtime's, then data, then whatever package happens to be installed.
_KIND_RANK = {"tool": 0, "tools": 0, "yours": 1, "runtime": 1, "data": 2, "package": 3}
# Words that say nothing about what is wanted ("replace lines in a file"): they never match a
# name by themselves, and a doc scores them only as part of the whole phrase.
_STOP = frozenset("a an and are as at be by for from in into is it its of on or the to with".split())


def _query_words(query) -> list:
    words = [w for w in re.split(r"\W+", str(query).lower()) if w]
    meaningful = [w for w in words if w not in _STOP]
    return meaningful or words


def _score(words: list, name: str, doc: str) -> int:
    """Name hits weigh most (whole name, then part of it for words of 3+ letters); doc hits count
    whole words only ("in" is not in "installing"), and a doc holding every word, or the query
    as written, outranks any single hit."""
    if not words:
        return 0
    score = 0
    in_doc = 0
    for w in words:
        if w == name:
            score += 100
        elif len(w) >= 3 and w in name:
            score += 40
        hits = len(re.findall(rf"\b{re.escape(w)}", doc))
        if hits:
            in_doc += 1
            score += 10 + min(hits, 5)
    if len(words) > 1 and in_doc == len(words):
        score += 60
    return score


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
        words = _query_words(query)
        scored = []
        for order, (name, sig, text, kind) in enumerate(_entries(rt)):
            score = _score(words, name.lower(), (text or "").lower())
            if words and score == 0:
                continue
            scored.append((-score, _KIND_RANK.get(kind, 1), order, f"{name}{sig}  [{kind}]  {_gist(text)}".rstrip()))
        if not scored:
            return f"nothing matches {query!r}; apropos('') lists everything"
        return "\n".join(line for *_, line in sorted(scored))

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
