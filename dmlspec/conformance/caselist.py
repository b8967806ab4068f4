"""Case lists: the stable ids of a run's cases, one a line, as `dmlspec conformance --list`
prints them and `--cases FILE` reads them.

A case id is the pytest node id of a generated suite's test, relative to generated/tests:
`test_gather_nd.py::test_support_cell[1_0-InputTensor-data_type-FLOAT32]` names the operator
(its suite), the kind of test, and the cell, layout, constraint or example it takes; a random
test's id stands for the examples its Hypothesis profile draws (the same ones on every machine
in the derandomized `ci` profile). Ids are the same in every process and on every machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..limits import quote
from .shards import Shard, assign

__all__ = [
    "CaseListError",
    "case_id",
    "failed_cases",
    "read_case_list",
    "render_case_list",
    "select_cases",
]


class CaseListError(ValueError):
    """A case list that cannot be read or holds something that is not a case id."""


def case_id(text: str) -> str | None:
    """`text` as a case id (a leading folder, such as generated/tests/, dropped), or None when
    it is not one."""
    path, sep, test = text.strip().partition("::")
    module = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not sep or not test or not module.startswith("test_") or not module.endswith(".py"):
        return None
    return f"{module}::{test}"


def read_case_list(path: Path) -> tuple[str, ...]:
    """The case ids a file lists (blank lines and # comments skipped), in order, once each."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise CaseListError(f"--cases {path}: cannot read it ({reason})") from None
    ids: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = case_id(line)
        if found is None:
            raise CaseListError(
                f"--cases {path}:{number}: expected a case id such as "
                f"test_gather_nd.py::test_support_cell[...] (as --list prints them); "
                f"got {quote(line.strip())}"
            )
        ids[found] = None
    return tuple(ids)


def render_case_list(ids: Iterable[str]) -> str:
    return "".join(f"{i}\n" for i in ids)


def failed_cases(results: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of the cases a run's results.json records as failed, sorted."""
    return tuple(sorted({t["nodeid"] for t in results["tests"] if t["outcome"] == "failed"}))


def select_cases(
    cases: Sequence[tuple[str, str]],
    wanted: tuple[str, ...] | None,
    shard: Shard | None,
    timings: Mapping[str, float] | None = None,
) -> set[str]:
    """The ids, of these (case id, operator) pairs, that a run with `--cases` listing `wanted`
    and `--shard` runs: the listed ones (CaseListError naming one the run lacks), then the
    shard's part of them."""
    if wanted is not None:
        present = {c for c, _ in cases}
        missing = [w for w in wanted if w not in present]
        if missing:
            raise CaseListError(
                f"--cases: {len(missing)} listed case(s) are not in this run, such as "
                f"{quote(missing[0])} (a case of another spec version, or of an operator "
                "--ops leaves out)"
            )
        listed = set(wanted)
        cases = [c for c in cases if c[0] in listed]
    if shard is None:
        return {c for c, _ in cases}
    shards = assign(cases, shard.count, timings)
    return {c for c, _ in cases if shards[c] == shard.index - 1}
