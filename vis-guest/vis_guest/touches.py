"""Python's own ways of showing data, taught to settle the tool calls they meet: print(),
pprint/pformat and the json encoder. Each runs a call (or the calls a container holds, one
or two levels deep and sent together, as `return` does) where it would otherwise show a
never-run call or refuse it as not serializable."""

from .deferred import _CONTAINERS, DeferredCall, settle_return


def settling_print(builtin_print):
    """print() that settles the calls its container arguments hold (one or two levels, sent
    together, as `return` does): `results.append(search(q))` in a loop, then `print(results)`,
    shows the data rather than a list of never-run calls. A call passed itself settles through
    str() already; anything else passes through untouched."""
    import functools

    @functools.wraps(builtin_print)
    def print(*args, **kwargs):  # noqa: A001 - it IS print
        for a in args:  # a plain loop: print sits in hot loops, a generator costs more
            if type(a) in _CONTAINERS:
                args = tuple(settle_return(a) if type(a) in _CONTAINERS else a for a in args)
                break
        return builtin_print(*args, **kwargs)

    return print


def settle_in_pprint(pprint) -> None:
    """pprint(results), pformat({...}) of calls, or of containers holding them: settled first,
    as print() does (PrettyPrinter's two entry points; pprint.pp and pprint.pprint use them)."""
    import functools

    cls = pprint.PrettyPrinter
    for name in ("pprint", "pformat"):
        base = getattr(cls, name)

        def settled(self, object, _base=base):  # noqa: A002 - pprint's own parameter name
            if isinstance(object, DeferredCall) or type(object) in _CONTAINERS:
                object = settle_return(object)
            return _base(self, object)

        setattr(cls, name, functools.wraps(base)(settled))


def settle_in_json(json) -> None:
    """json.dumps(cat(p)), json.dump({"r": grep(q)}, fh): the encoder settles a call it
    meets (it would refuse it as not serializable), in place of its own refusal."""
    base = json.JSONEncoder.default

    def default(self, o):
        if isinstance(o, DeferredCall):
            return o._settle()
        return base(self, o)

    default.__doc__ = base.__doc__
    json.JSONEncoder.default = default
