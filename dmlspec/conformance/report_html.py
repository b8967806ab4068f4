"""report.html: one self-contained page (no script, no network) of a conformance run.

The operator x data type x feature level matrix coloured by verdict, the summary per family,
every failure with its message, the case (desc and inputs) and the commands that rerun it,
and the skips counted by reason. A pure function of results.json."""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from html import escape
from typing import Any

from .report import matrix_rows, throughput
from .summary import OUTCOMES, by_family, skip_reasons, unhit_cell_reasons

__all__ = ["render_html", "verdict"]

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.n { text-align: right; }
.v { display: inline-block; margin: 1px; padding: 0 4px; border-radius: 3px; font-size: 90%; }
.v-passed { background: #c8f0c8; }
.v-failed { background: #f4a3a3; font-weight: bold; }
.v-xfailed { background: #e0d0f0; }
.v-xpassed { background: #f8d48a; }
.v-skipped { background: #e4e4e4; color: #555; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; }
"""


def verdict(counts: Counter[str]) -> str:
    """A matrix cell's verdict: failed beats stale (xpassed), then passed, expected failures,
    and skipped when nothing else ran."""
    for outcome in ("failed", "xpassed", "passed", "xfailed"):
        if counts.get(outcome):
            return outcome
    return "skipped"


def _matrix(results: dict[str, Any]) -> list[str]:
    cells: dict[str, dict[str, list[tuple[str, Counter[str]]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    data_types: set[str] = set()
    for operator, data_type, level, counts in matrix_rows(results):
        cells[operator][data_type].append((level, counts))
        data_types.add(data_type)
    columns = sorted(data_types)
    lines = [
        '<table id="matrix">',
        "<tr><th>operator</th>" + "".join(f"<th>{escape(d)}</th>" for d in columns) + "</tr>",
    ]
    for operator in sorted(cells):
        row = [f"<td>{escape(operator)}</td>"]
        for data_type in columns:
            chips = []
            for level, counts in cells[operator].get(data_type, []):
                shown = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))
                judged = verdict(counts)
                chips.append(
                    f'<span class="v v-{judged}" data-verdict="{judged}" '
                    f'data-operator="{escape(operator)}" data-type="{escape(data_type)}" '
                    f'data-level="{escape(level)}" title="{escape(shown)}">{escape(level)}</span>'
                )
            row.append("<td>" + "".join(chips) + "</td>")
        lines.append("<tr>" + "".join(row) + "</tr>")
    lines.append("</table>")
    return lines


def _families(results: dict[str, Any]) -> list[str]:
    lines = [
        '<table id="families">',
        "<tr><th>family</th><th>verdict</th>"
        + "".join(f"<th>{o}</th>" for o in OUTCOMES)
        + "<th>support cells hit</th></tr>",
    ]
    for tally in by_family(results):
        counts = "".join(f'<td class="n">{n}</td>' for n in tally.outcomes)
        lines.append(
            f"<tr><td>{escape(tally.name)}</td><td>{escape(tally.verdict)}</td>{counts}"
            f'<td class="n">{tally.cells_hit}/{tally.cells}</td></tr>'
        )
    lines.append("</table>")
    return lines


def _rerun(results: dict[str, Any], test: dict[str, Any]) -> str:
    backend = results.get("backend_option") or results["backend"]
    module = test["nodeid"].partition("::")[0]
    return "\n".join(
        [
            f"dmlspec conformance --backend {shlex.quote(backend)} --ops {test['operator']}",
            f"python -m pytest {shlex.quote('generated/tests/' + test['nodeid'])} "
            f"--dml-backend {shlex.quote(backend)} --hypothesis-profile ci"
            if module
            else "",
        ]
    ).strip()


def _failures(results: dict[str, Any]) -> list[str]:
    failed = [t for t in results["tests"] if t["outcome"] == "failed"]
    lines = [f'<h2 id="failures">Failures: {len(failed)}</h2>']
    if not failed:
        return [*lines, "<p>No test failed.</p>"]
    for test in failed:
        lines += [
            '<div class="failure">',
            f"<h3>{escape(test['operator'])}: <code>{escape(test['nodeid'])}</code></h3>",
            f"<p>{escape(test.get('message', ''))}</p>",
        ]
        if test.get("case"):
            case = escape(test["case"])
            lines.append(f'<p>Case (desc and inputs):</p><pre class="case">{case}</pre>')
        lines.append(f'<p>Rerun:</p><pre class="rerun">{escape(_rerun(results, test))}</pre>')
        lines.append("</div>")
    return lines


def _skips(results: dict[str, Any]) -> list[str]:
    reasons = skip_reasons(results)
    lines = [f'<h2 id="skips">Skips by reason: {sum(n for _, n in reasons)} tests</h2>']
    if not reasons:
        return [*lines, "<p>Nothing was skipped.</p>"]
    lines.append('<table id="skip-reasons"><tr><th>reason</th><th>tests</th></tr>')
    lines += [
        f'<tr><td>{escape(reason)}</td><td class="n">{count}</td></tr>' for reason, count in reasons
    ]
    lines.append("</table>")
    return lines


def _unhit(results: dict[str, Any]) -> list[str]:
    missing = unhit_cell_reasons(results)
    coverage = results["coverage"]
    lines = [f"<h2>Support cells hit: {coverage['hit']} of {coverage['total']}</h2>"]
    if not missing:
        return [*lines, "<p>Every cell up to the backend's feature level was exercised.</p>"]
    lines.append(
        '<table id="unhit"><tr><th>operator</th><th>level</th><th>tensor</th><th>kind</th>'
        "<th>value</th><th>why not hit</th></tr>"
    )
    for cell, why in missing:
        shown = "".join(
            f"<td>{escape(str(cell[k]))}</td>"
            for k in ("operator", "level", "tensor", "kind", "value")
        )
        lines.append(f"<tr>{shown}<td>{escape(why)}</td></tr>")
    lines.append("</table>")
    return lines


def render_html(results: dict[str, Any]) -> str:
    totals = Counter(t["outcome"] for t in results["tests"])
    title = f"Conformance of {results['backend']} at DML_FEATURE_LEVEL_{results['feature_level']}"
    said = ", ".join(f"{totals.get(o, 0)} {o}" for o in OUTCOMES)
    if "cases" in results:
        said += f"; {throughput(results)}"
    legend = " ".join(
        f'<span class="v v-{o}">{o}</span>' for o in ("passed", "failed", "xfailed", "xpassed")
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p id="totals">{escape(said)}</p>',
        "<h2>Per family</h2>",
        *_families(results),
        "<h2>Operator x data type x feature level</h2>",
        f"<p>Each chip is a feature level, coloured by verdict: {legend} "
        '<span class="v v-skipped">skipped</span> (nothing else ran); hover for the counts. '
        "Data type and level '-' are tests that ran no case; '(random)' random cases.</p>",
        *_matrix(results),
        *_failures(results),
        *_skips(results),
        *_unhit(results),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
