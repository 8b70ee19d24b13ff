"""The `vis` module for trusted extensions.

An extension file registers itself::

    import vis

    def greet(name: str) -> str:
        "Say hello."
        return f"hello {name}"

    vis.register(vis.Extension(name="hello", description="...", tools=[greet]))

It runs in a trusted worker (never the sandbox's process). The model calls its tools
through the host as ``<alias>_<name>``; it never evaluates code here.
"""

from ._extension import Extension, Hook, Refuse, after, before, register
from ._state import state

__all__ = ["Extension", "Hook", "Refuse", "after", "before", "register", "state"]
