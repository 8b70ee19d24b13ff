"""Pictures back to the host: matplotlib figures (plt.show(), or left open at the end of a
block) and PIL images given to vis_attach become PNG attachments of the block.

Nothing here imports matplotlib or PIL: the worker stays lean until a block does (lazy.py
patches pyplot on its first import)."""

import io
import sys

from .lazy import when_imported

# One figure's PNG may be this large; a bigger one is drawn again at a lower resolution,
# and dropped with a note when even that does not fit.
MAX_FIGURE_BYTES = 4 << 20
# Figures attached per block; the rest are closed and named in a note.
MAX_FIGURES = 16
# Pixels drawn for one figure (an RGBA canvas of 16M pixels is 64 MB): the resolution is
# lowered before drawing so a huge figsize cannot exhaust the worker's memory.
MAX_PIXELS = 16_000_000
_MIN_DPI = 10


def install(rt) -> None:
    """plt.show() attaches instead of opening a window (patched when pyplot is imported)."""
    when_imported("matplotlib.pyplot", lambda plt: _patch_pyplot(rt, plt))


# matplotlib's config and cache directory inside the outbox (never an attachment).
CONFIG_DIR = ".matplotlib"


def _patch_pyplot(rt, plt) -> None:
    def show(*_args, **_kwargs):
        """Attach every open figure as a PNG (the sandbox has no display) and close it."""
        flush(rt)

    plt.show = show


def _png(fig) -> tuple[bytes, int]:
    dpi = float(fig.get_dpi() or 100)
    w, h = fig.get_size_inches()
    if w * h * dpi * dpi > MAX_PIXELS:
        dpi = max(_MIN_DPI, (MAX_PIXELS / max(w * h, 1e-9)) ** 0.5)
    while True:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        data = buf.getvalue()
        if len(data) <= MAX_FIGURE_BYTES or dpi <= _MIN_DPI:
            return data, int(dpi)
        dpi = max(_MIN_DPI, dpi / 2)


def flush(rt) -> None:
    """Every open pyplot figure becomes an attachment (figure-<n>.png), then is closed."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    from . import attach

    nums = list(plt.get_fignums())
    for i, num in enumerate(nums):
        fig = plt.figure(num)
        name = f"figure-{num}.png"
        try:
            if i >= MAX_FIGURES:
                rt.notes.append(f"{name} was not attached: at most {MAX_FIGURES} figures per block")
                continue
            asked = int(fig.get_dpi() or 100)
            data, dpi = _png(fig)
            if len(data) > MAX_FIGURE_BYTES:
                rt.notes.append(
                    f"{name} was not attached: {len(data)} bytes as PNG even at {dpi} dpi, over the "
                    f"{MAX_FIGURE_BYTES} byte cap; make it smaller (figsize) or save it under a root"
                )
                continue
            attach.record(rt, name, data)
            if dpi < asked:
                rt.notes.append(f"{name} was drawn at {dpi} dpi instead of {asked} to stay under the size cap")
        except Exception as e:  # noqa: BLE001 - one figure that cannot draw must not lose the others
            rt.notes.append(f"{name} could not be drawn: {type(e).__name__}: {e}")
        finally:
            plt.close(fig)


def image_png(obj) -> bytes | None:
    """PNG bytes of a PIL image or a matplotlib figure; None for anything else."""
    mod = type(obj).__module__ or ""
    if mod.startswith("PIL.") and hasattr(obj, "save"):
        buf = io.BytesIO()
        img = obj if obj.mode in ("1", "L", "LA", "P", "RGB", "RGBA", "I;16", "I") else obj.convert("RGBA")
        img.save(buf, format="PNG")
        return buf.getvalue()
    if mod.startswith("matplotlib.") and hasattr(obj, "savefig"):
        return _png(obj)[0]
    return None
