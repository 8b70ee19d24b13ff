"""The one runtime state of this interpreter: config, tools, the session namespace."""

import builtins
import sys
import types

try:
    from _vis import dict_version as _dict_version
except ImportError:  # the guest tests' plain-CPython driver (test/guest/fixtures/driver.py)

    def _dict_version(_d):
        return None


# Names the runtime itself owns in the session globals; hidden from the model's view.
SYSTEM_VAR_NAMES = (
    "session",
    "__name__",
    "__doc__",
    "__builtins__",
    "__annotations__",
    "__loader__",
    "__spec__",
    "__package__",
    "__file__",
    "__cached__",
)

# Runtime helpers the model may clobber; restored before every block.
HELPER_NAMES = ("doc", "apropos", "defs", "gather", "vis_attach", "vis_attach_bytes", "network_probe", "print")
_HELPERS = frozenset(HELPER_NAMES)


class Runtime:
    def __init__(self):
        self.config: dict = {}
        self.tools: dict = {}  # name -> bound object (Tool, Namespace or data)
        self.specs: dict = {}  # name -> spec from the host
        self.removed: set = set()
        # name -> cause ('timeout', ...) of values a worker replacement lost (session['survived']),
        # so a NameError on one says what happened instead of suggesting a search.
        self.lost: dict = {}
        self.module = types.ModuleType("__main__")
        self.globals = self.module.__dict__
        self.builtins: dict = {}  # the builtins every block starts from
        self.stdout = sys.stdout
        self.stderr = sys.stderr
        self.block_no = 0
        self.last_value = None
        self.failure_key = None
        self.failure_count = 0
        self.registry: dict = {}  # name -> {kind, source} for snapshots and defs()
        self.attachments: list = []
        self.notes: list = []  # what the runtime tells the model after its output
        self.installed = False
        self.builtins_version = None  # _vis.dict_version of the builtins after the last restore
        # name -> (value, snapshot item or None) of the scalar constants the last snapshot saw (snapshot.py)
        self.const_texts: dict = {}
        # What this worker last told the host after a block (defs, names, cwd): an outcome
        # carries each only when it changed, and the host keeps the last one it got.
        self.reported: dict = {}
        self.forget_reported()
        # Whether the last snapshot saw a value that can change in place (snapshot.entries).
        self.snapshot_volatile = True

    def forget_reported(self) -> None:
        """The next block reports all of its state (a reply that may not have reached the
        host, e.g. one that failed to encode, must not leave the host with stale state)."""
        self.reported = {"defs": None, "names": None, "cwd": None}

    def set_builtin(self, name: str, value) -> None:
        # Changes the builtins dict (and so its version): the next restore compares in full.
        self.builtins[name] = value
        builtins.__dict__[name] = value

    def drop_builtin(self, name: str) -> None:
        self.builtins.pop(name, None)
        builtins.__dict__.pop(name, None)

    def restore(self) -> None:
        """Undo whatever the last block did to builtins and runtime names."""
        bd = builtins.__dict__
        # Untouched since the last restore (the dict's modification count says so in O(1)):
        # nothing to compare. Else one C-level comparison of the two dicts: `==` first (no
        # item tuples built, values compared by identity first), then the subset test for
        # builtins a block added, which stay.
        version = _dict_version(bd)
        if version is None or version != self.builtins_version:
            if not (bd == self.builtins or bd.items() >= self.builtins.items()):
                for k, v in self.builtins.items():
                    if bd.get(k) is not v:
                        bd[k] = v
            self.builtins_version = _dict_version(bd)
        g = self.globals
        keys = g.keys()
        if not keys.isdisjoint(_HELPERS):
            for name in HELPER_NAMES:
                g.pop(name, None)
        if not keys.isdisjoint(self.tools):
            for name in self.tools:
                g.pop(name, None)
        g["__name__"] = "__main__"
        g["__builtins__"] = builtins
        sys.modules["__main__"] = self.module
        sys.stdout = self.stdout
        sys.stderr = self.stderr


RT = Runtime()
