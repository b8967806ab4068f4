"""Shards of a conformance run: `--shard K/N` runs a deterministic 1/N of the cases.

Every shard collects the same cases and computes the same assignment, so the N shards together
run each case exactly once, on as many machines as a CI system gives them. Without timings each
operator's cases are dealt round-robin over the shards (a shard gets a 1/N of every operator, so
a slow operator slows every shard alike); with an earlier run's junit.xml the cases go, longest
first, to the shard with the least work so far (a case that run did not time costs the mean of
its operator's timed cases, else of all of them).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..limits import quote

__all__ = ["Shard", "ShardError", "assign", "read_timings"]


class ShardError(ValueError):
    """A malformed `--shard` or an unreadable timings file."""


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based, as people count them) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ShardError(f"--shard K/N needs 1 <= K <= N; got {self}")

    @staticmethod
    def parse(text: str) -> Shard:
        index, slash, count = text.strip().partition("/")
        if not slash or not index.isdigit() or not count.isdigit():
            raise ShardError(f"--shard must be K/N (such as 2/4); got {quote(text)}")
        return Shard(int(index), int(count))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def read_timings(path: Path) -> dict[str, float]:
    """Seconds each case took, by case id, from a junit.xml (or the report folder holding one)
    that `dmlspec conformance` wrote."""
    file = path / "junit.xml" if path.is_dir() else path
    try:
        root = ElementTree.parse(file).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise ShardError(f"--timings {file}: cannot read junit XML ({error})") from None
    timings: dict[str, float] = {}
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            raise ShardError(
                f"--timings {file}: testcase {quote(name)} has time {quote(case.get('time'))}, "
                "not a number of seconds"
            ) from None
        timings[junit_case_id(classname, name)] = seconds
    return timings


def junit_case_id(classname: str, name: str) -> str:
    """The case id (pytest node id) of a junit testcase: pytest writes the module path
    dotted, without .py, as its classname."""
    return f"{classname.replace('.', '/')}.py::{name}"


def assign(
    cases: Sequence[tuple[str, str]], count: int, timings: Mapping[str, float] | None = None
) -> dict[str, int]:
    """The shard (0-based) of each case, given as (case id, operator) pairs."""
    ordered = sorted(set(cases), key=lambda case: (case[1], case[0]))
    if not timings:
        return {case_id: i % count for i, (case_id, _) in enumerate(ordered)}
    known: dict[str, list[float]] = defaultdict(list)
    for case_id, operator in ordered:
        if case_id in timings:
            known[operator].append(timings[case_id])
    every = [t for times in known.values() for t in times]
    fallback = sum(every) / len(every) if every else 1.0

    def cost(case_id: str, operator: str) -> float:
        if case_id in timings:
            return timings[case_id]
        times = known.get(operator)
        return sum(times) / len(times) if times else fallback

    costed = sorted(((cost(c, o), c) for c, o in ordered), key=lambda pair: (-pair[0], pair[1]))
    loads = [0.0] * count
    shards: dict[str, int] = {}
    for seconds, case_id in costed:
        lightest = min(range(count), key=lambda k: (loads[k], k))
        shards[case_id] = lightest
        loads[lightest] += seconds
    return shards
