"""`dmlspec lint`: run every documented example through the generated validators.

For each example: what the validators say of the form the page prints, at the operator's
introduction level and at the highest level; at which documented levels the corrected (or,
without errata, the printed) form is valid; and whether every erratum's expected findings
really appear. The specs are wrong if a corrected form is valid nowhere or an erratum is not
backed by what it expects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .loading.examples import values_shape
from .model import Catalog, Example, ExampleFields, ExampleTensor, OperatorSpec, example_field_value
from .validation import ValidationResult, validate_operator

__all__ = ["ExampleVerdict", "lint", "render_lint"]


@dataclass(frozen=True)
class ExampleVerdict:
    operator: str
    example: str
    as_written: tuple[tuple[str, ValidationResult], ...]  # (level, result)
    findings: frozenset[str]  # what the printed form produces (ids, support:X, missing:X, ...)
    valid_at: tuple[str, ...]  # documented levels where the runnable form is valid
    unbacked: tuple[str, ...]  # expected findings that did not appear
    has_errata: bool
    drafted: bool = False  # the spec is a draft: its examples are as printed, not yet curated

    @property
    def ok(self) -> bool:
        """Errata are backed, and a curated example has a form valid at a documented level.
        A drafted example invalid as printed awaits curation (a corrected form and errata)."""
        return (bool(self.valid_at) or self.drafted) and not self.unbacked

    @property
    def needs_curation(self) -> bool:
        return self.drafted and not self.valid_at


def operator_json(spec: OperatorSpec, fields: ExampleFields) -> dict[str, Any]:
    """The example as DxDispatch operator JSON (tensor data left out)."""
    desc: dict[str, Any] = {}
    for name, value in fields:
        if isinstance(value, ExampleTensor):
            desc[name] = {k: v for k, v in value.to_json().items() if k != "Values"}
        elif isinstance(value, tuple):  # a tensor array
            desc[name] = [{k: v for k, v in t.to_json().items() if k != "Values"} for t in value]
        else:
            desc[name] = example_field_value(spec.field(name), value)
    return {"type": spec.operator_type, "desc": desc}


def findings_of(result: ValidationResult, fields: ExampleFields) -> set[str]:
    found = set(result.fired())
    for violation in result.violations:
        name = violation.path.split("/")[2] if violation.path.startswith("/desc/") else ""
        if violation.constraint.startswith("SUPPORT."):
            found.add(f"support:{name}")
        if violation.constraint == "JSON.required_field" and violation.path.count("/") == 2:
            found.add(f"missing:{name}")
    found |= {f"warning:{w.field}" for w in result.warnings}
    for name, value in fields:
        printed = isinstance(value, ExampleTensor) and value.values is not None
        if printed and values_shape(value.values) != value.sizes:  # type: ignore[union-attr]
            found.add(f"values:{name}")
    return found


def _verdict(catalog: Catalog, spec: OperatorSpec, example: Example) -> ExampleVerdict:
    levels = list(dict.fromkeys([spec.introduced, catalog.common.highest_feature_level.name]))
    printed = operator_json(spec, example.as_written)
    results = tuple((level, validate_operator(printed, level)) for level in levels)
    findings: set[str] = set()
    for _, result in results:
        findings |= findings_of(result, example.as_written)
    runnable = operator_json(spec, example.valid_form)
    documented = list(dict.fromkeys([spec.introduced, *(r.feature_level for r in spec.support)]))
    valid_at = tuple(level for level in documented if validate_operator(runnable, level).valid)
    expected = [f for erratum in example.errata for f in erratum.expect]
    return ExampleVerdict(
        spec.name,
        example.id,
        results,
        frozenset(findings),
        valid_at,
        tuple(f for f in expected if f not in findings),
        bool(example.errata),
        spec.status == "drafted",
    )


def lint(catalog: Catalog) -> list[ExampleVerdict]:
    return [_verdict(catalog, spec, e) for spec in catalog.operators for e in spec.examples]


def render_lint(verdicts: list[ExampleVerdict]) -> str:
    rows = [
        (
            "operator",
            "example",
            "as written (intro level; highest level)",
            "runnable form",
            "errata",
        )
    ]
    for verdict in verdicts:
        printed = "; ".join(
            f"{level}: {'valid' if r.valid else ', '.join(r.fired())}"
            + (f" (+{len(r.warnings)} warning)" if r.warnings else "")
            for level, r in verdict.as_written
        )
        runnable = (
            f"valid at {', '.join(verdict.valid_at)}"
            if verdict.valid_at
            else "INVALID (drafted: needs curation)"
            if verdict.drafted
            else "INVALID"
        )
        if not verdict.has_errata:
            errata = "-"
        elif verdict.unbacked:
            errata = f"NOT BACKED: {', '.join(verdict.unbacked)}"
        else:
            errata = "backed"
        rows.append((verdict.operator, verdict.example, printed, runnable, errata))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    bad = sum(not v.ok for v in verdicts)
    pending = sum(v.needs_curation for v in verdicts)
    lines.append(
        f"{len(verdicts)} examples: "
        + ("all consistent" if not bad else f"{bad} inconsistent")
        + (
            f"; {pending} drafted examples are invalid as printed and await curation"
            if pending
            else ""
        )
    )
    return "\n".join(lines)
