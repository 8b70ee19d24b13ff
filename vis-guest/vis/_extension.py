"""Extension declarations: plain data the loader checks and seals for the host."""

_registered = []


class Refuse(Exception):
    """Raised by a hook to refuse a tool call; the message goes back to the model."""


class Hook:
    """Runs ``fn`` before or after the host tool named ``tool``.

    A before-hook gets ``(args)``; an after-hook gets ``(args, result)``. Returning a
    string, or raising ``vis.Refuse(message)``, refuses the call with that message.
    """

    def __init__(self, when, tool, fn):
        self.when = when
        self.tool = tool
        self.fn = fn

    def __repr__(self):
        return f"<vis hook {self.when} {self.tool}>"


def before(tool, fn=None):
    """``vis.before("write_file", check)`` or ``@vis.before("write_file")``."""
    if fn is None:
        return lambda f: Hook("before", tool, f)
    return Hook("before", tool, fn)


def after(tool, fn=None):
    if fn is None:
        return lambda f: Hook("after", tool, f)
    return Hook("after", tool, fn)


class Extension:
    """What a file offers the host. Checked by the loader; a bad field is a load error."""

    def __init__(
        self,
        *,
        name,
        description="",
        version="0",
        alias=None,
        tools=(),
        prompt=None,
        activation=None,
        slash_commands=(),
        op_hooks=(),
        ctx=None,
        sandbox_modules=None,
    ):
        self.name = name
        self.description = description
        self.version = version
        self.alias = alias
        self.tools = tools
        self.prompt = prompt
        self.activation = activation
        self.slash_commands = slash_commands
        self.op_hooks = op_hooks
        self.ctx = ctx
        # {module name: pure-Python source}: importable in every session's sandbox.
        self.sandbox_modules = sandbox_modules

    def __repr__(self):
        return f"<vis extension {self.name!r}>"


def register(extension):
    """Offers ``extension`` to the host. Call once, at the top level of the file."""
    if not isinstance(extension, Extension):
        raise TypeError(f"vis.register() takes a vis.Extension, not {type(extension).__name__}")
    _registered.append(extension)
    return extension


def _take_registered():
    """The loader's side: what the file just registered, and a clean slate."""
    out = list(_registered)
    _registered.clear()
    return out
