"""What a conformance run's results say, summed up for a reader: per operator and per family,
every skip by its reason, and why each support cell or tensor layout left unexercised was.

Pure functions of results.json (what the plugin writes); the family of an operator is its
kernel's primitive in the catalog. Skip messages come from dmlspec.conformance.suite and from
pytest; SKIP_REASONS turns each into a sentence a user of the toolkit understands, the same
for every test it explains, so that they can be counted."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

__all__ = [
    "OUTCOMES",
    "SKIP_REASONS",
    "Tally",
    "by_family",
    "by_operator",
    "family_of",
    "skip_reason",
    "skip_reasons",
    "unhit_cell_reasons",
    "unhit_layout_reasons",
]

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "flaky")

# pytest's parametrize names -> what an empty list of them means for the operator's spec.
_EMPTY_SETS = {
    "example": "the spec documents no example",
    "constraint": "the spec has no error constraint to break",
    "layout": "the common spec lists no strided layout",
    "rule": "the common spec lists no strided-tensor rule",
    "level": "the spec's support tables have no cell of this kind (none above the first level "
    "for the boundary tests)",
}

# (pattern of a skip message, the reason counted); the first match wins.
SKIP_REASONS: tuple[tuple[str, str], ...] = (
    (
        r"does not validate descs",
        "the backend does not validate descs (validates = False), so the tests that it "
        "rejects invalid ones do not apply",
    ),
    (
        r"claims \S+, which includes",
        "boundary test of a cell the backend's feature level includes: only cells introduced "
        "above its level must be rejected",
    ),
    (
        r"claims feature level \S+, below",
        "the cell is introduced above the backend's (or --feature-level's) level",
    ),
    (r"does not exist at", "the operator is introduced above the backend's feature level"),
    (
        r"is valid only from",
        "the documented example needs a higher feature level than the backend's",
    ),
    (r"does not implement this case", "the backend does not implement the case (Unsupported)"),
    (r"declined \d+ cases", "the backend declined every case drawn for the cell (Unsupported)"),
    (
        r"every desc breaking \S+ also breaks the support row",
        "the constraint cannot be broken alone at this level; it is tested from a higher one",
    ),
    (
        r"no desc breaking only|no drawn \S+ desc can break",
        "no valid desc breaks the constraint alone: the support rows or other rules imply it",
    ),
    (r"can take the \S+ layout", "no tensor of the operator can take the layout"),
    (r"lists no layouts", "the common spec lists no strided layout"),
)


def skip_reason(message: str) -> str:
    """The counted reason for one skip message."""
    text = message.removeprefix("Skipped: ")
    empty = re.search(r"got empty parameter set[^\[(]*[\[(]'?([A-Za-z_]+)", text)
    if empty:
        return "nothing to run: " + _EMPTY_SETS.get(
            empty.group(1), f"the spec gives no {empty.group(1)} to run"
        )
    for pattern, reason in SKIP_REASONS:
        if re.search(pattern, text):
            return reason
    return text.strip() or "skipped without a reason"


def skip_reasons(results: dict[str, Any]) -> list[tuple[str, int]]:
    """Every skip reason with its count, most frequent first."""
    counted = Counter(
        skip_reason(t.get("message", "")) for t in results["tests"] if t["outcome"] == "skipped"
    )
    return sorted(counted.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class Tally:
    """One operator's (or family's) outcomes and support-cell coverage."""

    name: str
    outcomes: tuple[int, ...]  # in OUTCOMES order
    cells_hit: int
    cells: int

    @property
    def verdict(self) -> str:
        failed, xpassed = self.outcomes[1], self.outcomes[4]
        if failed:
            return "failed"
        if xpassed:
            return "stale expected failures"
        return "passed" if self.outcomes[0] + self.outcomes[3] else "nothing ran"


def family_of(operator: str) -> str:
    """The family an operator belongs to: its kernel's primitive (element_wise, data_movement,
    reduction, generator, scatter, ...)."""
    from .suite import catalog

    try:
        kernel = catalog().operator(operator).kernel
    except KeyError:
        return "other"
    return kernel.primitive if kernel is not None else "other"


def _tallies(results: dict[str, Any], group: Any) -> list[Tally]:
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    for test in results["tests"]:
        outcomes[group(test["operator"])][test["outcome"]] += 1
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cell in results.get("coverage", {}).get("cells", []):
        counts = cells[group(cell["operator"])]
        counts[0] += bool(cell["hits"])
        counts[1] += 1
    return [
        Tally(
            name,
            tuple(outcomes[name].get(o, 0) for o in OUTCOMES),
            cells[name][0],
            cells[name][1],
        )
        for name in sorted(outcomes)
    ]


def by_operator(results: dict[str, Any]) -> list[Tally]:
    return _tallies(results, lambda operator: operator)


def by_family(results: dict[str, Any]) -> list[Tally]:
    return _tallies(results, family_of)


def _test_outcomes(results: dict[str, Any], test: str) -> dict[tuple[str, ...], dict[str, Any]]:
    """The results of one generated test, keyed by operator and parameters."""
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for result in results["tests"]:
        if result.get("test") != test:
            continue
        if test == "test_support_cell":
            # The id holds the cell (level-tensor-kind-value); the result's `level` is that of
            # the planned case that exercised it, which may be lower.
            params = result["nodeid"].rpartition("[")[2].rstrip("]").split("-")
            key = (result["operator"], *params)
        else:
            key = (result["operator"], str(result.get("layout", "")))
        found[key] = result
    return found


def _because(result: dict[str, Any] | None, what: str) -> str:
    if result is None:
        return f"its {what} did not run (deselected, or the run stopped early)"
    if result["outcome"] == "skipped":
        return f"its {what} was skipped: {skip_reason(result.get('message', ''))}"
    if result["outcome"] in ("failed", "xfailed"):
        return f"its {what} failed before the case ran to the end"
    return f"its {what} passed without exercising it"


def unhit_cell_reasons(results: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Each support cell no case exercised, with why."""
    tests = _test_outcomes(results, "test_support_cell")
    reasons = []
    for cell in results.get("coverage", {}).get("cells", []):
        if cell["hits"]:
            continue
        key = tuple(str(cell[k]) for k in ("operator", "level", "tensor", "kind", "value"))
        reasons.append((cell, _because(tests.get(key), "support-cell test")))
    return reasons


def unhit_layout_reasons(results: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Each (operator, tensor, layout) no case ran, with why."""
    tests = _test_outcomes(results, "test_strided_layout")
    reasons = []
    for row in results.get("layouts", {}).get("layouts", []):
        if row["hits"]:
            continue
        result = tests.get((row["operator"], row["layout"]))
        if result is not None and result["outcome"] == "passed":
            reason = (
                f"the {row['layout']} case ran, but this tensor could not take the layout in "
                "it (an optional tensor left out, or sizes with nothing to pad, permute or "
                "broadcast), nor did a random strided case draw it"
            )
        else:
            reason = _because(result, f"{row['layout']}-layout test")
        reasons.append((row, reason))
    return reasons
