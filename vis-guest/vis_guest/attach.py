"""Attachments: files a block hands to the host, by vis_attach*, or by closing them in the
per-session outbox directory (VIS_OUTBOX)."""

import base64
import builtins
import errno
import fcntl
import os

from .plots import CONFIG_DIR

# What vis_attach*, and the figures a block leaves open, may hand over in one block, in all. They
# cross to the host inside the block's result: base64 (4/3 of the bytes) in one wire frame of at
# most 16 Mi characters (src/protocol/framing.ts), beside the printed output (1 Mi characters,
# up to 6 each once escaped). Past the frame the host would retire the worker with the session's
# globals, so a larger attachment is refused here, where the block can catch it. A file closed in
# the outbox (VIS_OUTBOX) is read by the host from disk instead: up to 32 MiB, and a block's outbox
# files up to 100 and 64 MiB in all (src/engine/outbox-files.ts, which enforces it).
MAX_BYTES = 6 << 20


class AttachmentTooLarge(ValueError):
    """Refused before it is recorded; `code` is the host's catalogue code."""

    code = "attachment.too-large"


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"BM", "image/bmp"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"ID3", "audio/mpeg"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
)


def sniff(head: bytes, name: str) -> str:
    """Magic bytes first, then the file name's extension, then text vs binary."""
    for magic, media in _MAGIC:
        if head.startswith(magic):
            return media
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[4:8] == b"ftyp":
        return "video/mp4"
    lead = head.lstrip()[:256].lower()
    if lead.startswith(b"<svg") or (lead.startswith(b"<?xml") and b"<svg" in head[:1024].lower()):
        return "image/svg+xml"
    import mimetypes  # here, not at import: it pulls in urllib and ipaddress for every worker

    guessed, _ = mimetypes.guess_type(name)
    if guessed:
        return guessed
    try:
        head.decode("utf-8")
        return "text/plain"
    except UnicodeDecodeError:
        return "application/octet-stream"


def _check(rt, name: str, size: int) -> None:
    held = sum(a["size"] for a in rt.attachments)
    if held + size > MAX_BYTES:
        already = f" (this block already attached {held})" if held else ""
        raise AttachmentTooLarge(
            f"{name} is {size} bytes; a block may attach {MAX_BYTES} bytes in all{already}. "
            "Write a larger file into the outbox directory VIS_OUTBOX (attached when closed, up to "
            "32 MiB), or save it under a root"
        )


def record(rt, name: str, data: bytes) -> dict:
    _check(rt, name, len(data))
    rec = {
        "name": name,
        "media_type": sniff(data[:2048], name),
        "size": len(data),
        "data_b64": base64.b64encode(data).decode("ascii"),
    }
    rt.attachments.append(rec)
    return rec


def make_helpers(rt):
    def vis_attach(path, name=None):
        """Hand a produced file to the host (read through the sandbox's own open()), or a
        picture: a PIL image or a matplotlib figure, attached as PNG."""
        if not isinstance(path, (str, bytes, os.PathLike)):
            from .plots import image_png

            png = image_png(path)
            if png is None:
                raise TypeError(
                    f"vis_attach takes a file path, a PIL image or a matplotlib figure, not {type(path).__name__}"
                )
            record(rt, name or "image.png", png)
            return
        p = os.fspath(path)
        name = name or os.path.basename(p)
        with builtins.open(p, "rb") as f:  # the confined open: a denial reads as one
            data = f.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:  # never read past the cap; name the file's real size
                _check(rt, name, max(len(data), os.fstat(f.fileno()).st_size))
        record(rt, name, data)

    def vis_attach_bytes(data, name):
        """Hand bytes (or text, as UTF-8) to the host as a file called `name`."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        record(rt, str(name), bytes(data))

    return vis_attach, vis_attach_bytes


def outbox_dir(rt) -> str | None:
    return rt.config.get("outbox")


def scan(rt) -> dict:
    """{file: (mtime_ns, size)} under the outbox; remembers each directory's mtime."""
    root = outbox_dir(rt)
    seen: dict = {}
    dirs: dict = {}
    if not root or not os.path.isdir(root):
        rt.outbox_dirs = dirs
        return seen
    for dirpath, subdirs, files in os.walk(root):
        if dirpath == root and CONFIG_DIR in subdirs:
            subdirs.remove(CONFIG_DIR)  # matplotlib's cache lives there, not attachments
        try:
            dirs[dirpath] = os.stat(dirpath).st_mtime_ns
        except OSError:
            continue
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                st = os.stat(p)
            except OSError:
                continue
            seen[p] = (st.st_mtime_ns, st.st_size)
    rt.outbox_dirs = dirs
    return seen


def _quick_scan(rt) -> dict | None:
    """When no outbox directory changed its entries, only the known files need a stat.

    stat() raises no audit event, where listing a directory does: this keeps the per-block
    cost of the outbox to a few syscalls."""
    dirs = getattr(rt, "outbox_dirs", None)
    if not dirs:
        return None
    stat = os.stat
    try:
        for d, mtime in dirs.items():
            if stat(d).st_mtime_ns != mtime:
                return None
    except OSError:
        return None
    known = getattr(rt, "outbox_seen", None)
    if not known:
        return {}  # the usual block: no file in the outbox, and no directory changed
    seen = {}
    for p in known:
        try:
            st = os.stat(p)
        except OSError:
            return None
        seen[p] = (st.st_mtime_ns, st.st_size)
    return seen


def _open_for_writing(path: str) -> bool:
    """Whether some descriptor still has the file open for writing.

    A read lease is refused (EAGAIN) exactly then; the jail does not let us list
    /proc/self/fd, and leases need nothing outside the outbox."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return False
    except OSError as e:
        return e.errno in (errno.EAGAIN, errno.EBUSY)
    finally:
        os.close(fd)


def collect(rt) -> list:
    """Files new or changed in the outbox since the last look, once they are closed.

    A file still open at the end of a block is reported after a later block, once closed."""
    seen = getattr(rt, "outbox_seen", {})
    after = _quick_scan(rt)
    if after is None:
        after = scan(rt)
    elif not after and not seen:
        return []
    changed = [p for p, st in after.items() if seen.get(p) != st]
    if not changed:
        rt.outbox_seen = after
        return []
    root = outbox_dir(rt)
    out = []
    for p in sorted(changed):
        if _open_for_writing(p):
            after[p] = seen.get(p)  # stays "changed" (and known) until it is closed
            continue
        try:
            with builtins.open(p, "rb") as f:
                head = f.read(2048)
        except OSError:
            continue
        rel = os.path.relpath(p, root)
        out.append({"name": rel, "media_type": sniff(head, rel), "size": after[p][1], "path": p})
    rt.outbox_seen = after
    return out
