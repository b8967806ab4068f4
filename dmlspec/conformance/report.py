"""Summaries of a conformance run (results.json written by the plugin): the console matrix and
the Markdown report."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

__all__ = ["matrix_rows", "render_markdown", "render_matrix"]

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "flaky")


def matrix_rows(results: dict[str, Any]) -> list[tuple[str, str, str, Counter[str]]]:
    """(operator, data type, feature level, outcome counts), sorted; tests that ran no case
    (skipped before drawing one) count under data type and level '-'."""
    table: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for test in results["tests"]:
        key = (test["operator"], test.get("data_type", "-"), test.get("level", "-"))
        table[key][test["outcome"]] += 1
    return [(*key, table[key]) for key in sorted(table)]


def _counts(counter: Counter[str]) -> list[str]:
    return [str(counter.get(outcome, 0)) for outcome in OUTCOMES]


def render_matrix(results: dict[str, Any]) -> str:
    header = ("operator", "data type", "level", *OUTCOMES)
    rows = [header] + [(o, d, lv, *_counts(c)) for o, d, lv, c in matrix_rows(results)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    totals = Counter(t["outcome"] for t in results["tests"])
    coverage = results["coverage"]
    lines.append(
        f"{results['backend']} at feature level {results['feature_level']}: "
        + ", ".join(f"{totals.get(o, 0)} {o}" for o in OUTCOMES)
        + f"; support cells hit {coverage['hit']}/{coverage['total']}"
        + (
            f"; tensor layouts hit {results['layouts']['hit']}/{results['layouts']['total']}"
            if results.get("layouts")
            else ""
        )
        + (f"; {results['cases']} cases run" if "cases" in results else "")
        + (f" for {results['checks']} checks" if "checks" in results else "")
    )
    return "\n".join(lines)


def _layout_lines(results: dict[str, Any]) -> list[str]:
    """Per operator, which tensors ran in which layouts (strided tensors, spec/common.json)."""
    table = results.get("layouts")
    if not table or not table["layouts"]:
        return []
    lines = [
        "",
        f"## Tensor layouts: {table['hit']} of {table['total']} (operator, tensor, layout) run",
        "",
        "| operator | tensor | " + " | ".join(_layout_names(table)) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in _layout_names(table)) + " |",
    ]
    hits: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for row in table["layouts"]:
        hits[(row["operator"], row["tensor"])][row["layout"]] = row["hits"]
    for (operator, tensor), by_layout in hits.items():
        shown = [
            str(by_layout[name]) if name in by_layout else "-" for name in _layout_names(table)
        ]
        lines.append(f"| {operator} | {tensor} | " + " | ".join(shown) + " |")
    return lines


def _layout_names(table: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(row["layout"] for row in table["layouts"]))


def render_markdown(results: dict[str, Any]) -> str:
    totals = Counter(t["outcome"] for t in results["tests"])
    coverage = results["coverage"]
    lines = [
        f"# Conformance of `{results['backend']}` at DML_FEATURE_LEVEL_{results['feature_level']}",
        "",
        ", ".join(f"**{totals.get(o, 0)}** {o}" for o in OUTCOMES),
        "",
        "| operator | data type | level | " + " | ".join(OUTCOMES) + " |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in OUTCOMES) + " |",
    ]
    for operator, data_type, level, counter in matrix_rows(results):
        lines.append(
            f"| {operator} | {data_type} | {level} | " + " | ".join(_counts(counter)) + " |"
        )
    lines += [
        "",
        f"## Support-table coverage: {coverage['hit']} of {coverage['total']} cells hit",
        "",
    ]
    missing = [c for c in coverage["cells"] if not c["hits"]]
    if missing:
        lines += ["| operator | level | tensor | kind | value |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| {c['operator']} | {c['level']} | {c['tensor']} | {c['kind']} | {c['value']} |"
            for c in missing
        ]
    else:
        lines.append("Every cell up to the backend's feature level was exercised.")
    lines += _layout_lines(results)
    if results["expected_failures"]:
        lines += ["", "## Expected failures (known divergences)", ""]
        for entry in results["expected_failures"]:
            unused = "" if entry["matched"] else " *(matches no test)*"
            lines.append(f"- `{entry['pattern']}`: {entry['reason']}{unused}")
    if results["stale"]:
        lines += ["", "## Stale expected failures (these tests now pass)", ""]
        lines += [f"- `{nodeid}`" for nodeid in results["stale"]]
    flaky = [t for t in results["tests"] if t["outcome"] == "flaky"]
    if flaky:  # failed, then passed on a retry, or a baseline's known flake
        lines += ["", "## Flaky", ""]
        lines += [f"- `{t['nodeid']}`: {t['message']}" for t in flaky]
    failed = [t for t in results["tests"] if t["outcome"] == "failed"]
    if failed:
        lines += ["", "## Failures", ""]
        lines += [f"- `{t['nodeid']}`: {t['message']}" for t in failed]
    return "\n".join(lines) + "\n"
