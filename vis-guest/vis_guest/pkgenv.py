"""The environment staged packages read when they are imported, set before any block can
import them (and without importing them): matplotlib on Agg with its configuration from
the distribution and a writable cache, the time zone database inside the distribution.
Nothing here reaches outside the distribution and the worker's outbox."""

import os
import sys

from . import plots
from .lazy import when_imported

_configured = False


def _in_dist(*parts) -> str | None:
    p = os.path.join(sys.prefix, *parts)
    return p if os.path.exists(p) else None  # os.stat: no audit event, no import


def configure(rt) -> None:
    global _configured
    outbox = rt.config.get("outbox")
    if outbox:
        # matplotlib's config and font cache dir must be writable; the outbox is, and
        # attachment scanning skips this directory.
        os.environ["MPLCONFIGDIR"] = os.path.join(outbox, plots.CONFIG_DIR)
    if _configured:
        return
    _configured = True
    os.environ["MPLBACKEND"] = "Agg"  # no display in the jail
    site = os.path.join("lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages")
    # Debian's matplotlib looks for its matplotlibrc in /etc, outside the jail.
    rc = _in_dist(site, "matplotlib", "mpl-data", "matplotlibrc")
    if rc:
        os.environ["MATPLOTLIBRC"] = rc
    zoneinfo = _in_dist("share", "zoneinfo")
    if zoneinfo:
        # pytz and the stdlib's zoneinfo (which pytz lists zones with) read the copy in
        # the distribution; the host's /usr/share/zoneinfo is not in the jail.
        os.environ["PYTZ_TZDATADIR"] = zoneinfo
        when_imported("zoneinfo", lambda zi: zi.reset_tzpath([zoneinfo]))
    fonts = _in_dist("share", "matplotlib")
    if fonts:
        when_imported("matplotlib", lambda _mpl: _seed_font_cache(fonts))
    plots.install(rt)


_PREFIX = "@VIS_PREFIX@"  # src/distribution/packages/install.ts FONT_CACHE_PREFIX


def _seed_font_cache(shipped: str) -> None:
    """Copies the font list built at staging into this worker's matplotlib cache before
    matplotlib's font manager loads (most of a second saved on the first pyplot import)."""
    cache = os.environ.get("MPLCONFIGDIR")
    if not cache:
        return
    try:
        for name in os.listdir(shipped):
            target = os.path.join(cache, name)
            if not name.startswith("fontlist-") or os.path.exists(target):
                continue
            with open(os.path.join(shipped, name), encoding="utf-8") as f:
                text = f.read().replace(_PREFIX, sys.prefix)
            os.makedirs(cache, exist_ok=True)
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
    except OSError:
        pass  # matplotlib builds its own list then
