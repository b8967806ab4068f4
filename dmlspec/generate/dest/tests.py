"""Emit generated/tests/test_<operator>.py: an operator's conformance suite, from its spec.

The module only lists what to test, read from the spec: the documented examples, every support
cell, every error constraint, every cell a feature level introduces and the strided layouts of
the common spec; the checks themselves live in dmlspec.conformance.suite.
"""

from __future__ import annotations

from ...conformance.layouts import strided_rules
from ...conformance.plan import support_cells
from ...model import Catalog, OperatorSpec
from ..header import python_header
from ..pysource import docstring, q
from .validators import module_name

__all__ = ["render_suite"]


def _introduced(spec: OperatorSpec) -> list[tuple[str, str, str, str]]:
    """Cells a row adds to the row below it (the first row's cells are the operator's own)."""
    found = []
    for lower, higher in zip(spec.support, spec.support[1:], strict=False):
        for cell in higher.tensors:
            below = lower.tensor(cell.tensor)
            found += [
                (higher.feature_level, cell.tensor, "data_type", t)
                for t in cell.data_types
                if t not in below.data_types
            ]
            found += [
                (higher.feature_level, cell.tensor, "rank", str(n))
                for n in cell.dimension_counts
                if n not in below.dimension_counts
            ]
    return found


def _tuple_of_tuples(name: str, rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return [f"{name}: tuple[tuple[str, str, str, str], ...] = ()"]
    return [f"{name} = (", *[f"    ({', '.join(q(v) for v in row)})," for row in rows], ")"]


def _strings(name: str, items: list[str]) -> list[str]:
    if not items:
        return [f"{name}: tuple[str, ...] = ()"]
    single = f"{name} = {q(tuple(items))}"
    if len(single) <= 100:
        return [single]
    return [f"{name} = (", *[f"    {q(item)}," for item in items], ")"]


def render_suite(catalog: Catalog, spec: OperatorSpec) -> str:
    examples = [e.id for e in spec.checked_examples]
    errors = [c.id for c in spec.constraints if c.constraint_class == "error"]
    lines = python_header([spec.path]).splitlines()
    lines += docstring(
        f"Conformance suite for {' or '.join(spec.operator_types)}.\n\n"
        "Run it with `dmlspec conformance --backend NAME` (or pytest with --dml-backend): "
        "documented examples, every support-table cell up to the backend's feature level, "
        "random valid cases, strided tensors in every layout of the common spec, and for "
        "validating backends every error constraint broken alone and every cell above the "
        "backend's level.",
        0,
    )
    lines += [
        "",
        "from __future__ import annotations",
        "",
        "import pytest",
        "from hypothesis import given",
        "from hypothesis import strategies as st",
        "",
        "from dmlspec.conformance import suite",
        "from dmlspec.conformance.suite import Target",
        "",
        f"OPERATOR = {q(spec.name)}",
    ]
    lines += _strings("EXAMPLES", examples)
    lines += _tuple_of_tuples("CELLS", support_cells(spec))  # type: ignore[arg-type]
    lines += _strings("CONSTRAINTS", errors)
    lines += _tuple_of_tuples("INTRODUCED", _introduced(spec))  # type: ignore[arg-type]
    lines += _strings(
        "LAYOUTS", [t.name for t in catalog.common.tensor_layouts if t.name != "packed"]
    )
    lines += _strings("STRIDED_RULES", strided_rules(catalog.common))
    lines += [
        "",
        "",
        '@pytest.mark.parametrize("example", EXAMPLES)',
        "def test_documented_example(dml: Target, example: str) -> None:",
        "    suite.check_example(dml, OPERATOR, example)",
        "",
        "",
        "@pytest.mark.parametrize(",
        '    ("level", "tensor", "kind", "value"), CELLS, ids=["-".join(c) for c in CELLS]',
        ")",
        "def test_support_cell(",
        "    dml: Target, level: str, tensor: str, kind: str, value: str",
        ") -> None:",
        "    suite.check_cell(dml, OPERATOR, level, tensor, kind, value)",
        "",
        "",
        "@given(seed=st.integers(0, 2**32 - 1))",
        "def test_random_valid_case(dml: Target, seed: int) -> None:",
        "    suite.check_property(dml, OPERATOR, seed)",
        "",
        "",
        '@pytest.mark.parametrize("constraint", CONSTRAINTS)',
        "def test_rejects_desc_breaking(dml: Target, constraint: str) -> None:",
        "    suite.check_negative(dml, OPERATOR, constraint)",
        "",
        "",
        "@pytest.mark.parametrize(",
        '    ("level", "tensor", "kind", "value"),',
        "    INTRODUCED,",
        '    ids=["-".join(c) for c in INTRODUCED],',
        ")",
        "def test_rejects_cell_above_the_backend_level(",
        "    dml: Target, level: str, tensor: str, kind: str, value: str",
        ") -> None:",
        "    suite.check_boundary(dml, OPERATOR, level, tensor, kind, value)",
        "",
        "",
        '@pytest.mark.parametrize("layout", LAYOUTS)',
        "def test_strided_layout(dml: Target, layout: str) -> None:",
        "    suite.check_layout(dml, OPERATOR, layout)",
        "",
        "",
        "@given(seed=st.integers(0, 2**32 - 1))",
        "def test_random_strided_case(dml: Target, seed: int) -> None:",
        "    suite.check_random_layouts(dml, OPERATOR, seed)",
        "",
        "",
        '@pytest.mark.parametrize("rule", STRIDED_RULES)',
        "def test_rejects_strided_desc_breaking(dml: Target, rule: str) -> None:",
        "    suite.check_strided_rule(dml, OPERATOR, rule)",
    ]
    return "\n".join(lines) + "\n"


def suite_path(spec: OperatorSpec) -> str:
    return f"tests/test_{module_name(spec)}.py"
