"""Disk space is not reserved ahead of writing: `os.posix_fallocate` refuses.

The session's disk budget is measured every 250 ms while a block runs; fallocate(2) reserves
blocks without writing them, so a block could take gigabytes in microseconds before the first
check. The worker's seccomp filter answers fallocate(2) with EOPNOTSUPP (the bound: native code
and tools get that errno, and glibc's posix_fallocate then writes the blocks, which the budget
bounds like any write). This wrapper gives Python callers that errno with a readable reason
instead of glibc's quiet, slower fallback."""

import errno
import os
import posix

_REASON = (
    "os.posix_fallocate: reserving disk space ahead of writing is refused in the sandbox (it "
    "would take space faster than the session's disk budget is checked); write the data instead"
)


def install() -> None:
    if not hasattr(posix, "posix_fallocate"):
        return
    real = posix.posix_fallocate

    def posix_fallocate(fd, offset, length, /):
        raise OSError(errno.EOPNOTSUPP, _REASON)

    posix_fallocate.__doc__ = real.__doc__
    posix.posix_fallocate = posix_fallocate
    os.posix_fallocate = posix_fallocate
