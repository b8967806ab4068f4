"""Child processes of a run (the backend's process, xdist's workers) start isolated from the
working folder: a `numpy.py` planted where `dmlspec conformance` runs must not be imported.

Python puts the working folder first on the import path of `python -m` and `python -c`
(which both start those children); PYTHONSAFEPATH=1 stops that. The import path a child is
handed starts with the folder this dmlspec was imported from (the child runs the same
dmlspec) and keeps the working folder, where the parent had it, only as the last place to
look: a backend module beside the user still loads, but never shadows an installed package.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["child_path", "isolate_children"]

# The folder holding the dmlspec package this process runs.
OWN_FOLDER = str(Path(__file__).resolve().parents[2])


def child_path(path: list[str], working_folder: str, own_folder: str = OWN_FOLDER) -> list[str]:
    """`path` for a child: `own_folder` first, then the other entries, and those naming the
    working folder ("" included) last, unless the working folder is `own_folder`."""
    here, own = os.path.realpath(working_folder), os.path.realpath(own_folder)

    def names(entry: str, folder: str) -> bool:  # "" is the working folder
        return (os.path.realpath(entry) if entry else here) == folder

    rest = [p for p in path if not names(p, own)]
    last = [p for p in rest if names(p, here)]
    return [own_folder, *(p for p in rest if p not in last), *last]


def isolate_children(environ: MutableMapping[str, str], path: list[str]) -> None:
    """Have every Python process started from now on leave the working folder off the front
    of its import path (in `environ`), and reorder this one's `path` as `child_path` (xdist
    hands it to its workers)."""
    environ["PYTHONSAFEPATH"] = "1"
    path[:] = child_path(path, os.getcwd())
