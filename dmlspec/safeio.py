"""Reading and writing files that untrusted input names, without hanging, blowing up or escaping.

- Reads open only regular files (a FIFO, device or folder is refused at once, without blocking)
  and read at most a limit of bytes (`DMLSPEC_MAX_FILE_BYTES`).
- `confine` resolves a path named inside a folder (a manifest's case id, a model's sourcePath)
  and refuses one that leaves it, through `..`, an absolute path or a symbolic link, unless the
  user allowed any path.
- `write_file` writes under a folder without following symbolic links planted there: the file
  is written beside its target and renamed over it (a link is replaced, never written through),
  and a folder on the way that is a link is refused.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from pathlib import Path, PurePath

import numpy as np

from .limits import MAX_FILE_BYTES, cut, quote

__all__ = ["UnsafePath", "confine", "read_bytes", "read_npy", "read_text", "write_file"]


class UnsafePath(ValueError):
    """A file that may not be read or written: not regular, too large, outside its folder."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (default `DMLSPEC_MAX_FILE_BYTES`).

    Raises UnsafePath for anything else and OSError when the file cannot be opened."""
    limit = int(MAX_FILE_BYTES) if limit is None else limit
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"{path} is {_kind(info.st_mode)}; only regular files are read")
        if info.st_size > limit:
            raise UnsafePath(_too_large(path, info.st_size, limit))
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while we read it
        raise UnsafePath(_too_large(path, len(data), limit))
    return data


def _too_large(path: Path, size: int, limit: int) -> str:
    return (
        f"{path} holds {size} bytes, over the limit of {limit} "
        f"(set {MAX_FILE_BYTES.variable} to raise it)"
    )


def read_text(path: Path, limit: int | None = None) -> str:
    """A regular file's UTF-8 text (see `read_bytes`); invalid UTF-8 raises UnsafePath."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnsafePath(
            f"{path} is not UTF-8 text (byte {error.start} is {data[error.start]:#04x})"
        ) from None


def read_npy(path: Path, limit: int | None = None) -> np.ndarray:
    """The array of a .npy file (see `read_bytes`), never unpickled; UnsafePath for a file
    that is not one (corrupt, empty, pickled objects, an .npz archive)."""
    data = read_bytes(path, limit)
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise UnsafePath(
            f"{path.name} is not a .npy array NumPy reads without pickle ({cut(str(error))})"
        ) from None
    if not isinstance(loaded, np.ndarray):
        raise UnsafePath(f"{path.name} is not a .npy array (an archive of arrays?)")
    return loaded


def confine(
    folder: Path, relative: object, what: str, place: str, allow_any_path: bool = False
) -> Path:
    """`folder / relative`, symbolic links resolved, refused unless it stays inside `folder`.

    `what` names the field in messages ("sourcePath", "case id"), `place` the folder ("the
    model's folder")."""
    if not isinstance(relative, str) or not relative or "\0" in relative:
        raise UnsafePath(f"{what} must be a file name or relative path; got {quote(relative)}")
    target = (folder / relative).resolve()
    if allow_any_path:
        return target
    pure = PurePath(relative)
    if pure.is_absolute() or ".." in pure.parts or not target.is_relative_to(folder.resolve()):
        raise UnsafePath(
            f"{what} {quote(relative)} leaves {place} (use --allow-any-path to allow it)"
        )
    return target


def write_file(root: Path, relative: str, data: bytes) -> None:
    """Write `root/relative` (folders created as needed) unless it already holds `data`.

    Refuses a folder on the way that is a symbolic link; a link at the file's own place is
    replaced by the file, never written through."""
    folder = root
    for part in PurePath(relative).parts[:-1]:
        if part in ("", ".", "..") or os.sep in part:
            raise UnsafePath(f"{quote(relative)} is not a plain relative path")
        folder = folder / part
        if folder.is_symlink():
            raise UnsafePath(f"{folder} is a symbolic link; refusing to write through it")
        if not folder.exists():
            folder.mkdir()
        elif not folder.is_dir():
            raise UnsafePath(f"{folder} is not a folder")
    target = folder / PurePath(relative).name
    with contextlib.suppress(OSError, UnsafePath):
        unchanged = not target.is_symlink() and target.stat().st_size == len(data)
        if unchanged and read_bytes(target, len(data)) == data:
            return
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
