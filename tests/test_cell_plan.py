"""The support-cell plan (dmlspec/conformance/plan.py): every cell gets a valid case of its own
row that exercises it, cells and levels share cases, and a suite runs a shared case once and
judges every cell it exercises by that run."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from dmlspec import load_catalog
from dmlspec.backends import NumpyBackend
from dmlspec.conformance import suite
from dmlspec.conformance.check import CaseFailure
from dmlspec.conformance.descs import CellChoice, draw_desc, when_choices
from dmlspec.conformance.plan import exercised_cells, plan_cells, support_cells
from dmlspec.validation import validate_operator

CATALOG = load_catalog()
HIGHEST = CATALOG.common.highest_feature_level.name


@functools.cache
def _plan(name: str) -> Any:
    """An operator's plan, drawn once for the tests that read it (a plan is drawn the same every
    time: test_a_plan_is_drawn_the_same_every_time)."""
    return plan_cells(CATALOG, CATALOG.operator(name))


def _key(operator: Mapping[str, Any]) -> str:
    return json.dumps(operator, sort_keys=True)


def test_every_cell_gets_a_valid_case_of_its_level_that_exercises_it() -> None:
    for spec in CATALOG.with_kernels:
        plan = _plan(spec.name)
        assert not plan.unfound, (spec.name, plan.unfound)
        assert set(plan.cases) == set(support_cells(spec)), spec.name
        checked: set[int] = set()
        for cell, cases in plan.cases.items():
            level = cell[0]
            for case in cases:
                assert case.feature_level == level, (spec.name, cell)
                if id(case) not in checked:  # a case shared by cells of its level: once
                    assert validate_operator(case.operator, level).valid, (spec.name, cell)
                    checked.add(id(case))
                exercised = exercised_cells(CATALOG, spec, case.operator, level)
                assert cell in exercised, (spec.name, cell)


def test_each_row_group_exercises_its_cells_going_through_its_members() -> None:
    """REDUCE's support rows are per group of functions: a cell two groups list has a case in
    each, and a group's cases take its functions in turn (every function is run)."""
    spec = CATALOG.operator("REDUCE")
    plan = plan_cells(CATALOG, spec)
    functions = {
        frozenset(when_choices(row)["Function"]) for row in spec.support if row.when is not None
    }
    float_output = plan.cases[("1_0", "OutputTensor", "data_type", "FLOAT32")]
    groups = {
        next(g for g in functions if c.operator["desc"]["Function"] in g) for c in float_output
    }
    assert len(float_output) == len(groups) == 4  # every group but ARGMIN/ARGMAX's
    used = {c.operator["desc"]["Function"] for cases in plan.cases.values() for c in cases}
    assert used == set().union(*functions)


def test_cells_and_levels_share_cases() -> None:
    cells = descs = 0
    for spec in CATALOG.with_kernels:
        plan = _plan(spec.name)
        cells += len(plan.cases)
        descs += len({_key(case.operator) for cases in plan.cases.values() for case in cases})
    assert descs * 4 < cells  # 8251 cells, 1576 descs when written
    # ELEMENT_WISE_ADD's 2_1 row keeps 1_0's FLOAT32 and rank 4: a 1_0 case, run at 2_1.
    plan = _plan("ELEMENT_WISE_ADD")
    at_1_0 = {_key(c.operator) for cell, (c,) in plan.cases.items() if cell[0] == "1_0"}
    (reused,) = plan.cases[("2_1", "ATensor", "data_type", "FLOAT32")]
    assert _key(reused.operator) in at_1_0


def test_a_plan_is_drawn_the_same_every_time() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    first, second = plan_cells(CATALOG, spec), plan_cells(CATALOG, spec)
    assert first.cases.keys() == second.cases.keys()
    for cell, (case,) in first.cases.items():
        (again,) = second.cases[cell]
        assert _key(case.operator) == _key(again.operator)
        assert case.inputs.keys() == again.inputs.keys()
        assert all(case.inputs[k].tobytes() == again.inputs[k].tobytes() for k in case.inputs)


def test_a_draw_honours_every_forced_cell() -> None:
    spec = CATALOG.operator("ELEMENT_WISE_ADD")
    forces = (CellChoice("BTensor", "data_type", "UINT64"), CellChoice("OutputTensor", "rank", 7))
    for seed in range(5):
        desc = draw_desc(CATALOG, spec, "4_1", random.Random(seed), forces)["desc"]
        assert {desc[t]["DataType"] for t in ("ATensor", "BTensor", "OutputTensor")} == {"UINT64"}
        assert len(desc["OutputTensor"]["Sizes"]) == 7


class _Counting(NumpyBackend):
    def __init__(self, off_by: int = 0) -> None:
        self.runs = 0
        self.off_by = off_by

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        self.runs += 1
        return {k: v + self.off_by for k, v in super().run(operator, inputs).items()}


def _sharing_cells() -> tuple[tuple[str, str, str, str], tuple[str, str, str, str]]:
    plan = plan_cells(CATALOG, CATALOG.operator("ELEMENT_WISE_ADD"))
    first = ("1_0", "ATensor", "data_type", "FLOAT32")
    (shared,) = plan.cases[first]
    other = next(c for c, cases in plan.cases.items() if cases[0] is shared and c != first)
    return first, other


def test_a_shared_case_runs_once_and_judges_each_cell_it_exercises() -> None:
    backend = _Counting()
    target = suite.Target(backend, HIGHEST)
    first, other = _sharing_cells()
    suite.check_cell(target, "ELEMENT_WISE_ADD", *first)
    suite.check_cell(target, "ELEMENT_WISE_ADD", *other)
    assert (backend.runs, target.cases, target.checks) == (1, 1, 2)
    assert target.cells[("ELEMENT_WISE_ADD", *other)] == 2  # once by each test's judgement


def test_a_failing_shared_case_fails_every_cell_it_exercises() -> None:
    backend = _Counting(off_by=1)
    target = suite.Target(backend, HIGHEST)
    for cell in _sharing_cells():
        with pytest.raises(CaseFailure, match="OutputTensor differs from the reference"):
            suite.check_cell(target, "ELEMENT_WISE_ADD", *cell)
    assert backend.runs == 1


def test_a_combined_draw_never_forces_tensors_the_presence_rules_keep_apart() -> None:
    """MULTIHEAD_ATTENTION takes its query as QueryTensor or a stacked tensor, never both: a
    draw forcing a cell of each could never be valid, and took all its attempts before the plan
    fell back to the first cell alone (two minutes of the operator's suite)."""
    from dmlspec.conformance.plan import _forces_with
    from dmlspec.conformance.solved import presence_allows

    spec = CATALOG.operator("MULTIHEAD_ATTENTION")
    assert presence_allows(spec, {"QueryTensor", "KeyTensor", "ValueTensor"})
    assert not presence_allows(spec, {"QueryTensor", "StackedQueryKeyTensor"})
    assert presence_allows(CATALOG.operator("GEMM"), {"ATensor", "CTensor"})  # no such rules
    first = ("", "6_1", "QueryTensor", "data_type", "FLOAT32")
    others = [
        ("", "6_1", "StackedQueryKeyTensor", "rank", "5"),
        ("", "6_1", "KeyTensor", "rank", "4"),
    ]
    forced = {f.tensor for f in _forces_with(spec, first, others)}
    assert "StackedQueryKeyTensor" not in forced and {"QueryTensor", "KeyTensor"} <= forced
