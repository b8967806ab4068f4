"""Whether a JAX compilation cache folder may be trusted.

Cache entries are compiled machine code that JAX loads and runs without checking where it came
from: whoever can write an entry decides what `ops.run` computes. So, as ssh refuses a key
file others can write to, dmlspec uses a cache folder only when no other user can change it:
the folder is this user's and writable by no one else, each folder above it is this user's or
root's and writable by no one else (or sticky, as /tmp: others cannot replace what is not
theirs), and no entry in it is a link or writable by others.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

__all__ = ["distrust", "trusted"]

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def distrust(folder: Path) -> str | None:
    """Why `folder` may not be trusted as a compilation cache, or None when it may."""
    user = os.geteuid()
    folder = Path(os.path.abspath(folder))
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder (a link, a file)"
    if info.st_uid != user:
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if info.st_mode & _OTHERS_WRITE:
        return f"other users can write to {folder} (mode {stat.S_IMODE(info.st_mode):o})"
    for above in folder.parents:
        up = above.stat()
        if up.st_uid not in (user, 0):
            return f"{above}, above it, belongs to another user (uid {up.st_uid})"
        if up.st_mode & _OTHERS_WRITE and not up.st_mode & stat.S_ISVTX:
            return f"other users can write to {above}, above it (mode {stat.S_IMODE(up.st_mode):o})"
    with os.scandir(folder) as entries:
        for entry in entries:
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode) or mode & _OTHERS_WRITE or entry.stat().st_uid != user:
                return f"its entry {entry.name} is a link, another user's or writable by others"
    return None


def trusted(folder: Path) -> bool:
    """Whether to use `folder` as the cache; warns, naming why, when not (dmlspec then runs
    uncached)."""
    try:
        reason = distrust(folder)
    except OSError as error:
        reason = f"{folder} cannot be checked ({error.strerror or error})"
    if reason is not None:
        warnings.warn(
            f"dmlspec: not using the JAX compilation cache: {reason} (its entries are machine "
            "code; set DMLSPEC_JAX_CACHE to a folder only you can write to, or off)",
            RuntimeWarning,
            stacklevel=3,
        )
    return reason is None
