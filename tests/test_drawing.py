"""The suites' drawing (dmlspec/conformance/cases.py) itself: the bounds it keeps, and that its
per-spec memos hand out values a caller may change."""

from __future__ import annotations

from collections import Counter

from dmlspec import load_catalog
from dmlspec.conformance.cases import (
    MAX_CASE_ELEMENTS,
    CellChoice,
    case_elements,
    draw_case,
    type_groups,
)
from dmlspec.conformance.plugin import coverage_table
from dmlspec.conformance.suite import _seed

CATALOG = load_catalog()


def test_support_cell_cases_stay_within_the_element_budget() -> None:
    # GATHER's output multiplies the input's sizes by the indices': its rank-8 cell once drew
    # 2 x 2381 x 2 x 2381 output elements, which took the reference 15 s.
    for operator in ("GATHER", "PADDING1", "TILE"):
        spec = CATALOG.operator(operator)
        level = CATALOG.common.highest_feature_level.name
        for cell in coverage_table(level, {operator}, Counter())["cells"]:
            value = int(cell["value"]) if cell["kind"] == "rank" else cell["value"]
            seed = _seed(operator, cell["level"], cell["kind"], cell["value"])
            case = draw_case(
                CATALOG, spec, cell["level"], seed, CellChoice(cell["tensor"], cell["kind"], value)
            )
            assert case_elements(case.operator["desc"]) <= MAX_CASE_ELEMENTS, cell


def test_type_groups_are_the_callers_own() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    groups = type_groups(spec, "DataType")
    assert {"InputTensor.DataType", "UpdatesTensor.DataType", "OutputTensor.DataType"} in groups
    groups[0].add("changed")
    assert all("changed" not in group for group in type_groups(spec, "DataType"))
