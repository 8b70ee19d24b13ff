"""The project's import roots on sys.path (the `sys_path` runtime config key).

The host resolves them from the project's metadata (src/project); here they only take their
place: first, in the given order, each once. Setting them again replaces what the previous
setting added, so a re-install never piles up stale roots."""

import sys

_added: list = []


def apply(paths) -> list:
    global _added
    wanted = []
    for p in paths or []:
        if isinstance(p, str) and p and p not in wanted:
            wanted.append(p)
    for p in _added:
        while p in sys.path:
            sys.path.remove(p)
    # Entries already on sys.path (the stdlib, site-packages) keep their own place.
    fresh = [p for p in wanted if p not in sys.path]
    sys.path[0:0] = fresh
    _added = fresh
    return list(fresh)
