"""The files a conformance run writes into its report folder, and the verdict on a run.

A run first removes its own files left by an earlier run there, so an earlier verdict can
never be read as this run's. A link planted at one of those names is removed, never followed
(`safeio.write_file` then writes a regular file in its place). The verdict refuses to call a
run a pass when nothing in it was judged.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..safeio import UnsafePath

__all__ = ["JUDGED", "REPORT_FILES", "clear_report_files", "nothing_judged"]

# Every file a run writes into --report, report.html included (the HTML report, where built).
REPORT_FILES = ("results.json", "junit.xml", "report.md", "report.html")
# Outcomes in which the backend's answer was judged: an expected failure (xfailed) alone is
# not one, or a backend listing "*" as expected to fail would pass every run.
JUDGED = ("passed", "failed", "xpassed")


def clear_report_files(folder: Path) -> None:
    """Remove the run's own files (and links at their names) from `folder`; UnsafePath for a
    folder at one of those names, or a linked Hypothesis database folder."""
    for name in REPORT_FILES:
        path = folder / name
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode):
            raise UnsafePath(f"{path} is a folder; a run writes its {name} there")
        os.unlink(path)
    database = folder / ".hypothesis"
    if database.is_symlink():
        raise UnsafePath(f"{database} is a symbolic link; refusing to write through it")


def nothing_judged(tests: Iterable[Mapping[str, Any]]) -> str | None:
    """Why a run with these results (results.json's "tests") judged nothing, or None when it
    judged at least one case."""
    outcomes = Counter(str(test.get("outcome")) for test in tests)
    if any(outcomes[o] for o in JUDGED):
        return None
    if not outcomes:
        return "the run judged nothing: it ran no test"
    said = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
    return f"the run judged nothing: no case passed or failed ({said})"
