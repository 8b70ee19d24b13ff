"""The third-party packages staged into the distribution, for apropos() and doc().

Read from their metadata (dist-info / egg-info) once, on the first lookup: no package is
imported to describe it."""

import os
import sys

_cache: list | None = None


def _site_packages() -> list:
    return [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]


def installed() -> list:
    """[(module, distribution name, version, summary)], one per importable top-level name."""
    global _cache
    if _cache is not None:
        return _cache
    import importlib.metadata as md

    out = {}
    for dist in md.distributions(path=_site_packages()):
        try:
            name = dist.metadata["Name"] or ""
            summary = dist.metadata["Summary"] or ""
            version = dist.version or ""
            top = (dist.read_text("top_level.txt") or "").split()
        except Exception:  # noqa: BLE001 - one unreadable metadata file must not hide the rest
            continue
        if not top:
            top = [name.replace("-", "_")]
        for module in top:
            if module.startswith("_") or module in out:
                continue
            if not any(
                os.path.exists(os.path.join(sp, module)) or os.path.exists(os.path.join(sp, module + ".py"))
                for sp in _site_packages()
            ):
                continue
            out[module] = (module, name, version, summary)
    _cache = sorted(out.values())
    return _cache


def describe(name: str) -> str | None:
    for module, dist, version, summary in installed():
        if name in (module, dist, dist.lower()):
            return f"{module}  [package {dist} {version}]\n\n{summary}\nimport {module}".rstrip()
    return None
