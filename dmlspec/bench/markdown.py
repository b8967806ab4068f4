"""One run's results (the JSON `--json` writes) as Markdown tables: what the README's
performance section shows, rendered instead of copied by hand.

Per family, a table of its large cases (dmlspec's variants' medians, the fastest correct
peer), the count of targets met, and every missed target with its measured ratio; then the
suite runs and their targets. A compute-bound family's table (its variants count FLOPs: the
convolution family) also shows plain XLA given the NumPy arrays, and out='s GFLOP/s and share
of the matrix-multiply peak instead of the copy bandwidth."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .families import KERNEL_JIT, PLAIN_XLA, is_plain_xla_on_numpy

__all__ = ["noise_note", "render_results"]

# The references beside dmlspec's variants (never peers): the kernel's program jitted whole and
# a jax.numpy formulation, each writing into a donated buffer.
REFERENCES = {KERNEL_JIT: "program out=", PLAIN_XLA: "plain XLA out="}
FAMILY_TITLES = {
    "seed": "seed operators",
    "element_wise": "element-wise",
    "reduction": "reductions",
    "data_movement": "data movement",
    "convolution": "convolution and matrix multiplication",
}


def _line(value: object) -> str:
    """Text from the results file as it may stand in one line of Markdown: line breaks become
    spaces, other control characters (terminal escapes) their `\\xNN` spelling."""
    return "".join(
        " " if c in "\n\r" else f"\\x{ord(c):02x}" if ord(c) < 32 or 127 <= ord(c) < 160 else c
        for c in str(value)
    )


def _cell(value: object) -> str:
    """Text from the results file as one table cell: `_line`, its `|` escaped."""
    return _line(value).replace("|", "\\|")


def render_results(results: dict[str, Any]) -> str:
    """The Markdown of one benchmark run, `\\n`-terminated."""
    lines: list[str] = []
    families = list(dict.fromkeys(case["family"] for case in results["cases"]))
    for family in families:
        cases = [c for c in results["cases"] if c["family"] == family]
        targets = [t for t in results["targets"] if t.get("family", "seed") == family]
        lines += [f"#### {_line(FAMILY_TITLES.get(family, family))}", ""]
        lines += _large_table(cases)
        lines += ["", *_targets(targets), ""]
    if results.get("suite"):
        lines += ["#### conformance suite", "", *_suite(results), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _large_table(cases: list[dict[str, Any]]) -> list[str]:
    # Results from before the JSON had "size" (run k and earlier) name their large cases so.
    large = [c for c in cases if c.get("size", "large" if "_large" in c["name"] else "") == "large"]
    if not large:
        return []
    columns = list(
        dict.fromkeys(v["name"] for c in large for v in c["variants"] if v["library"] == "dmlspec")
    )
    references = [
        library
        for library in REFERENCES
        if any(v["library"] == library for c in large for v in c["variants"])
    ]
    compute = any("gflops" in v for c in large for v in c["variants"])
    header = [
        "case",
        *(f"`{_cell(name)}`" for name in columns),
        *(REFERENCES[library] for library in references),
        *(["plain XLA on NumPy"] if compute else []),
        "best peer",
        "out= GFLOP/s (% peak)" if compute else "out= / donated % copy",
    ]
    rows = [
        "| " + " | ".join(header) + " |",
        "| --- | " + " | ".join("---:" for _ in header[1:-2]) + " | --- | ---: |",
    ]
    for case in large:
        by_name = {v["name"]: v for v in case["variants"] if v["library"] == "dmlspec"}
        cells = [
            _time(by_name[name]["median_seconds"]) if name in by_name else "-" for name in columns
        ]
        for library in references:
            reference = next(
                (v for v in case["variants"] if (v["library"], v["mode"]) == (library, "in place")),
                None,
            )
            cells.append(_time(reference["median_seconds"]) if reference else "-")
        if compute:
            on_numpy = next(
                (v for v in case["variants"] if is_plain_xla_on_numpy(v["library"], v["name"])),
                None,
            )
            cells.append(_time(on_numpy["median_seconds"]) if on_numpy else "-")
        peer = (
            f"{_cell(case['best_peer'])} {_time(case['best_peer_seconds'])}"
            if case["best_peer"]
            else "-"
        )
        in_place = [v for v in by_name.values() if v["mode"] == "in place" and v["correct"]]
        copy = f"{in_place[0]['fraction_of_copy']:.0%}" if in_place else "-"
        if compute:
            copy = _compute_rate(in_place[0]) if in_place else "-"
        rows.append(f"| {_cell(case['name'])} | " + " | ".join([*cells, peer, copy]) + " |")
    return rows


def _compute_rate(variant: dict[str, Any]) -> str:
    share = variant.get("fraction_of_peak")
    return f"{variant['gflops']:.1f}" + ("" if share is None else f" ({share:.0%})")


def noise_note(entries: list[dict[str, Any]]) -> str:
    """How many of these targets' misses lie within their rounds' noise ("" for results
    recorded before the spread was, and where nothing is missed)."""
    missed = [e for e in entries if e["met"] is False and "within_noise" in e]
    if not missed:
        return ""
    near = sum(1 for e in missed if e["within_noise"])
    return f" ({near} of the {len(missed)} misses within the rounds' noise)"


def _targets(targets: list[dict[str, Any]]) -> Iterator[str]:
    judged = [t for t in targets if t["met"] is not None]
    met = sum(1 for t in judged if t["met"])
    yield f"Targets met: {met} of {len(judged)}{noise_note(judged)}."
    missed = [t for t in judged if not t["met"]]
    if missed:
        yield ""
    for target in missed:
        yield f"- missed: {_line(target['target'])}: {_line(target['measured'])}"


def _suite(results: dict[str, Any]) -> Iterator[str]:
    yield "| JAX cache | distinct cases | checks judged | wall | cases/s | programs compiled |"
    yield "| --- | ---: | ---: | ---: | ---: | ---: |"
    for run in results["suite"]:
        if "error" in run:
            continue
        programs = run.get("programs_compiled")
        # Run k's file has no "cold": only its cold run counted programs.
        which = "empty (cold)" if run.get("cold", programs is not None) else "the user's (warm)"
        yield (
            f"| {which} | {_cell(run['cases'])} | {_cell(run['checks'])} | "
            f"{run['wall_seconds']:.1f} s | {run['cases'] / run['wall_seconds']:.1f} | "
            f"{'-' if programs is None else _cell(programs)} |"
        )
    entries = results.get("suite_targets", [])
    if entries:
        yield ""
    for entry in entries:
        verdict = "met" if entry["met"] else "missed"
        said = (_line(entry[key]) for key in ("case", "target", "measured"))
        yield f"- {verdict}: " + ": ".join(said)
        for note in entry["evidence"]:
            yield f"  - {_line(note)}"
