"""Summaries of a conformance run (results.json written by the plugin): the console matrix and
the Markdown report."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from .summary import (
    OUTCOMES,
    by_family,
    by_operator,
    family_of,
    skip_reasons,
    unhit_cell_reasons,
    unhit_layout_reasons,
)

__all__ = ["matrix_rows", "render_markdown", "render_matrix", "render_terminal", "throughput"]


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


def render_terminal(results: dict[str, Any]) -> str:
    """What the command prints at the end: a line per family, the operators that failed, the
    verdict. The full matrix is in report.md and report.html."""
    tallies = by_family(results)
    header = ("family", "verdict", *OUTCOMES, "support cells hit")
    rows = [header] + [
        (t.name, t.verdict, *(str(n) for n in t.outcomes), f"{t.cells_hit}/{t.cells}")
        for t in tallies
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    failing = [t for t in by_operator(results) if t.outcomes[1]]
    if failing:
        lines.append(
            f"failed: {len(failing)} operators: "
            + ", ".join(f"{t.name} ({t.outcomes[1]})" for t in failing)
        )
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
        + (f"; {throughput(results)}" if "cases" in results else "")
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
    not_run = unhit_layout_reasons(results)
    if not_run:
        lines += ["", "Not run, and why:", ""]
        lines += [
            f"- {row['operator']} {row['tensor']} {row['layout']}: {why}" for row, why in not_run
        ]
    return lines


def _layout_names(table: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(row["layout"] for row in table["layouts"]))


def throughput(results: dict[str, Any]) -> str:
    """Cases (one backend run each) and what they judged; cases per second where the run's
    time is known. Checks judged by a case run for another cell are coverage, not throughput."""
    if "cases" not in results:
        return ""
    said = f"{results['cases']} cases run"
    seconds = results.get("seconds")
    if isinstance(seconds, int | float) and seconds > 0:
        said += f" in {seconds:.0f} s ({results['cases'] / seconds:.1f} cases/s)"
    if "checks" in results:
        said += f", judging {results['checks']} checks"
    return said


def _summary_lines(results: dict[str, Any]) -> list[str]:
    """Per operator, then every skip counted by its reason."""
    lines = [
        "",
        "## Summary per operator",
        "",
        "| operator | family | verdict | " + " | ".join(OUTCOMES) + " | support cells hit |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in OUTCOMES) + " | ---: |",
    ]
    for tally in by_operator(results):
        counts = " | ".join(str(n) for n in tally.outcomes)
        lines.append(
            f"| {tally.name} | {family_of(tally.name)} | {tally.verdict} | {counts} | "
            f"{tally.cells_hit}/{tally.cells} |"
        )
    reasons = skip_reasons(results)
    if reasons:
        lines += [
            "",
            f"## Skips by reason: {sum(n for _, n in reasons)} tests",
            "",
            "| reason | tests |",
            "| --- | ---: |",
        ]
        lines += [f"| {reason} | {count} |" for reason, count in reasons]
    return lines


def render_markdown(results: dict[str, Any]) -> str:
    totals = Counter(t["outcome"] for t in results["tests"])
    coverage = results["coverage"]
    lines = [
        f"# Conformance of `{results['backend']}` at DML_FEATURE_LEVEL_{results['feature_level']}",
        "",
        ", ".join(f"**{totals.get(o, 0)}** {o}" for o in OUTCOMES)
        + (f"; {throughput(results)}" if "cases" in results else ""),
        *_summary_lines(results),
        "",
        "## Results per operator, data type and feature level",
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
    missing = unhit_cell_reasons(results)
    if missing:
        lines += [
            "| operator | level | tensor | kind | value | why not hit |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {c['operator']} | {c['level']} | {c['tensor']} | {c['kind']} | {c['value']} "
            f"| {why} |"
            for c, why in missing
        ]
    else:
        lines.append("Every cell up to the backend's feature level was exercised.")
    lines += _layout_lines(results)
    if results["expected_failures"]:
        lines += ["", "## Expected failures (known divergences)", ""]
        for entry in results["expected_failures"]:
            unused = "" if entry["matched"] else " *(matches no test)*"
            operator = f"{entry['operator']} " if entry.get("operator") else ""
            lines.append(f"- {operator}`{entry['pattern']}`: {entry['reason']}{unused}")
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
