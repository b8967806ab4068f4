"""The suites' drawing (dmlspec/conformance/cases.py, descs.py and inputs.py) itself: the
bounds it keeps, and that its per-spec memos hand out values a caller may change."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from dmlspec import load_catalog
from dmlspec.conformance import descs
from dmlspec.conformance.cases import draw_case
from dmlspec.conformance.descs import (
    MAX_CASE_ELEMENTS,
    CellChoice,
    case_elements,
    type_groups,
)
from dmlspec.conformance.plan import plan_cells
from dmlspec.conformance.plugin import coverage_table
from dmlspec.conformance.suite import _seed
from dmlspec.validation import validate_operator

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
        for planned in plan_cells(CATALOG, spec).cases.values():  # what the suites run first
            assert all(case_elements(c.operator["desc"]) <= MAX_CASE_ELEMENTS for c in planned)


def test_type_groups_are_the_callers_own() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    groups = type_groups(spec, "DataType")
    assert {"InputTensor.DataType", "UpdatesTensor.DataType", "OutputTensor.DataType"} in groups
    groups[0].add("changed")
    assert all("changed" not in group for group in type_groups(spec, "DataType"))


def test_windows_are_solved_for_not_left_to_chance(monkeypatch: pytest.MonkeyPatch) -> None:
    """SLICE's Sizes are the output's sizes (its equality, derived), SLICE1's and SLICE_GRAD's
    windows are drawn inside their tensors: a desc is found in a few attempts (drawing every
    dimension at random and rejecting took 50 to 70 validations a desc)."""
    validations = Counter[str]()

    def counting(operator: Any, level: str | None = None) -> Any:
        validations[operator["type"]] += 1
        return validate_operator(operator, level)

    monkeypatch.setattr(descs, "validate_operator", counting)
    level = CATALOG.common.highest_feature_level.name
    for operator, most in (("SLICE", 20), ("SLICE1", 5), ("SLICE_GRAD", 5)):
        spec = CATALOG.operator(operator)
        drawn = 0
        for cell in coverage_table(level, {operator}, Counter())["cells"]:
            value = int(cell["value"]) if cell["kind"] == "rank" else cell["value"]
            seed = _seed(operator, cell["level"], cell["kind"], cell["value"])
            draw_case(
                CATALOG, spec, cell["level"], seed, CellChoice(cell["tensor"], cell["kind"], value)
            )
            drawn += 1
        assert validations[spec.operator_type] / drawn < most, operator


def test_fused_activations_are_drawn_from_those_the_level_holds() -> None:
    """A FusedActivation drawn at 5_0 is never GELU (5_1) or ELEMENT_WISE_CLIP (a fused
    activation from 6_0), so no draw is wasted on a desc the level rejects; at 6_4 both turn
    up, and ELEMENT_WISE_ADD1's descs drawn at 5_0 are valid there."""
    import random

    def fused(level: str) -> Counter[str]:
        rng = random.Random(0)
        return Counter(
            descs._draw_activation(CATALOG, "FUSED_ACTIVATIONS", rng, level)["Type"]
            for _ in range(300)
        )

    later = {"ACTIVATION_GELU", "ELEMENT_WISE_CLIP"}
    assert not later & set(fused("5_0")) and later <= set(fused("6_4"))
    spec = CATALOG.operator("ELEMENT_WISE_ADD1")
    rng = random.Random(1)
    for _ in range(20):
        operator = descs.draw_desc(CATALOG, spec, "5_0", rng)
        assert validate_operator(operator, "5_0").valid
