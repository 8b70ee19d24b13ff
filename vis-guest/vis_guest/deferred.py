"""A bound tool returns a DeferredCall; settling it runs the tool on the host, once."""

import operator
import sys

from . import loopcalls, wire

_PENDING, _DONE, _FAILED, _RUNNING = 0, 1, 2, 3
_SENT = loopcalls.SENT  # awaited under asyncio's loop, its reply not in yet

# Opcodes that mean "the program reads this attribute" as opposed to a hasattr/getattr probe,
# which reaches __getattr__ from a CALL instruction.
_ATTR_OPS = None


def _attr_ops() -> set:
    global _ATTR_OPS
    if _ATTR_OPS is None:
        import dis

        _ATTR_OPS = {dis.opmap[n] for n in ("LOAD_ATTR", "LOAD_METHOD") if n in dis.opmap}
    return _ATTR_OPS


def _running_loop():
    aio = sys.modules.get("asyncio")
    return aio is not None and aio._get_running_loop() is not None


def _short(args: list) -> str:
    text = ", ".join(repr(a) for a in args)
    return text if len(text) <= 80 else text[:77] + "..."


class DeferredCall:
    __slots__ = ("_tool", "_args", "_state", "_value")

    def __init__(self, tool: str, args: list):
        self._tool = tool
        self._args = args
        self._state = _PENDING
        self._value = None

    # -- settling --------------------------------------------------------------------------
    def _complete(self, reply_json: str) -> None:
        try:
            self._value = wire.decode_reply(self._tool, reply_json)
            self._state = _DONE
        except Exception as e:  # noqa: BLE001 - a failed tool is stored and re-raised where awaited
            self._value = e
            self._state = _FAILED

    def _fail(self, error: BaseException) -> None:
        """It could not be sent (its arguments cannot cross): raised where it is awaited."""
        self._value = error
        self._state = _FAILED

    def _outcome(self):
        if self._state == _FAILED:
            raise self._value
        return self._value

    def _settle(self):
        if self._state == _PENDING:
            try:
                self._value = wire.call(self._tool, self._args)
                self._state = _DONE
            except wire.ToolError as e:
                self._value = e
                self._state = _FAILED
        elif self._state == _SENT:
            loopcalls.finish(self)
        return self._outcome()

    def __await__(self):
        if self._state == _PENDING:
            if _running_loop():
                # Inside asyncio.run(): asyncio's loop cannot take our yields; see loopcalls.py.
                return (yield from loopcalls.run(self))
            # Our scheduler (block driver or gather) sees the yield, sends the call and resumes us.
            yield self
        elif self._state == _SENT:
            loopcalls.finish(self)
        return self._outcome()

    # -- touching the call as data settles it ------------------------------------------------
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        caller = sys._getframe(1)
        code = caller.f_code.co_code
        if caller.f_lasti < 0 or code[caller.f_lasti] not in _attr_ops():
            # hasattr()/getattr() probes never run a tool.
            raise AttributeError(name)
        return getattr(self._settle(), name)

    def __str__(self):
        return str(self._settle())

    def __format__(self, spec):
        return format(self._settle(), spec)

    def __repr__(self):
        if self._state == _PENDING:
            return (
                f"<deferred call {self._tool}({_short(self._args)}): NEVER AWAITED, it did not run; "
                f"write `await {self._tool}(...)` or call it as a statement>"
            )
        return repr(self._value) if self._state == _DONE else f"<{self._tool} failed: {self._value}>"

    def __getitem__(self, key):
        return self._settle()[key]

    def __len__(self):
        return len(self._settle())

    def __contains__(self, item):
        return item in self._settle()

    def __iter__(self):
        return iter(self._settle())

    def __bool__(self):
        return bool(self._settle())

    def __eq__(self, other):
        return self._settle() == other

    def __ne__(self, other):
        return self._settle() != other

    # Identity hash: asyncio.gather() keys its arguments in a dict; equality compares values.
    __hash__ = object.__hash__

    def __add__(self, other):
        return self._settle() + other

    def __radd__(self, other):
        return other + self._settle()

    def __int__(self):
        return int(self._settle())

    def __float__(self):
        return float(self._settle())


def _settled_first(op):
    return lambda self, *other: op(self._settle(), *other)


def _settled_second(op):
    return lambda self, other: op(other, self._settle())


# Arithmetic and ordering touch the call as data too: `size(p) * 2`, `count(q) > 0`,
# `sorted(...)` over settled values, `-n`, `round(n / 2)`, `range(count(q))`.
for _name in ("lt", "le", "gt", "ge", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "index"):
    _op = getattr(operator, _name if _name != "index" else "index")
    setattr(DeferredCall, f"__{_name}__", _settled_first(_op))
for _name in ("sub", "mul", "truediv", "floordiv", "mod", "pow"):
    setattr(DeferredCall, f"__r{_name}__", _settled_second(getattr(operator, _name)))
DeferredCall.__round__ = lambda self, *n: round(self._settle(), *n)


class DeferredRun(DeferredCall):
    """A call of a plain def the rewrite promoted to `async def` (it awaits inside): deferred
    like a tool call, so it runs where a statement settles it (`main()`, `r = main()`), when it
    is touched as data (`print(main())`), or when awaited (`await main()`, gather batches)."""

    __slots__ = ("_coro",)

    def __init__(self, name: str, coro):
        super().__init__(name, [])
        self._coro = coro

    def _settle(self):
        if self._state == _PENDING:
            from .schedule import drive

            self._state = _RUNNING
            try:
                self._value = drive(self._coro)
                self._state = _DONE
            except BaseException as e:
                self._value, self._state = e, _FAILED
                raise
        return self._outcome()

    def __await__(self):
        if self._state == _PENDING:
            self._state = _RUNNING
            try:
                value = yield from self._coro.__await__()
            except BaseException as e:
                self._value, self._state = e, _FAILED
                raise
            self._value, self._state = value, _DONE
        return self._outcome()

    def _outcome(self):
        if self._state == _RUNNING:
            raise RuntimeError(f"{self._tool}() is still running: it cannot wait for itself")
        return super()._outcome()

    def __repr__(self):
        if self._state == _PENDING:
            return (
                f"<deferred run of {self._tool}(): NEVER AWAITED, it did not run; "
                f"write `await {self._tool}(...)` or call it as a statement>"
            )
        return super().__repr__()


def promoted(fn):
    """Decorator the rewrite puts on a def it promoted: a call returns a DeferredRun. An async
    generator (it also yields) is left as it is: iterating it is what runs it."""
    if fn.__code__.co_flags & 0x200:  # CO_ASYNC_GENERATOR
        return fn
    import functools

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return DeferredRun(fn.__name__, fn(*args, **kwargs))

    return call


def settle(value):
    """Statement positions: run a deferred call in place (the cheap path: no data walk)."""
    if isinstance(value, DeferredCall):
        return value._settle()
    return value


# `return` settles deferred calls this deep inside containers, visiting at most this many items.
RETURN_DEPTH = 2
RETURN_ITEMS = 1024
_CONTAINERS = (list, tuple, dict, set, frozenset)


def _pending(value, depth: int, found: list, budget: list) -> None:
    """Deferred calls inside `value`, up to `depth` container levels and the item budget."""
    items = value.values() if isinstance(value, dict) else value
    for item in items:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(item, DeferredCall):
            found.append(item)
        elif depth > 1 and type(item) in _CONTAINERS:
            _pending(item, depth - 1, found, budget)


def _substitute(value, depth: int):
    """Each settled call replaced by its result (a failed one raises its error), in place for
    lists and dicts; tuples and sets are rebuilt."""

    def one(item):
        if isinstance(item, DeferredCall):
            # Past the item budget a call was never sent: it stays deferred.
            return item if item._state == _PENDING else item._outcome()
        if depth > 1 and type(item) in _CONTAINERS:
            return _substitute(item, depth - 1)
        return item

    kind = type(value)
    if kind is list:
        for i, item in enumerate(value):
            value[i] = one(item)
        return value
    if kind is dict:
        for k, item in value.items():
            value[k] = one(item)
        return value
    out = [one(item) for item in value]
    if kind is tuple:
        return tuple(out)
    try:
        return kind(out)
    except TypeError:
        return value  # results that cannot live in a set: its calls are settled, the set stays


def _inside(value) -> list:
    if type(value) not in _CONTAINERS:
        return []
    found: list = []
    _pending(value, RETURN_DEPTH, found, [RETURN_ITEMS])
    return found


def settle_return(value):
    """`return x` in a plain def: the value settled, calls one or two container levels deep
    included (run together, so `return [cat(p) for p in ps]` costs one round trip)."""
    value = settle(value)
    found = _inside(value)
    if not found:
        return value
    from .schedule import run_all

    run_all([d for d in found if d._state == _PENDING])
    return _substitute(value, RETURN_DEPTH)


class _Ready:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __await__(self):
        return self.value
        yield  # pragma: no cover - makes this a generator


class _Contained:
    """`return {...}` in async def: the calls inside run together, then the data is returned."""

    __slots__ = ("value", "calls")

    def __init__(self, value, calls):
        self.value = value
        self.calls = calls

    def __await__(self):
        from .schedule import gather

        yield from gather(*[d for d in self.calls if d._state == _PENDING], return_exceptions=True).__await__()
        return _substitute(self.value, RETURN_DEPTH)


def awaitable(value):
    """`await x`: a plain value is returned as-is (and a settled call never re-runs)."""
    import inspect

    if isinstance(value, DeferredCall) or inspect.isawaitable(value):
        return value
    return _Ready(value)


def asettle(value):
    """`return x` inside async def: a deferred call is awaited so gather can still batch it."""
    if isinstance(value, DeferredCall):
        return value
    found = _inside(value)
    return _Contained(value, found) if found else _Ready(value)
