"""What the generated conformance modules call: one function per kind of test.

Each takes the session's `Target` (the backend under test, its feature level, the coverage
record) and the operator's name; the generated modules only list what to test.
"""

from __future__ import annotations

import functools
import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pytest

from .. import load_catalog
from ..errors import InvalidOperator, Unsupported
from ..model import Catalog, OperatorSpec
from ..validation import validate_operator
from .cases import Case, draw_case, example_operator
from .check import CaseFailure, run_case
from .descs import CellChoice, draw_desc, rows_at
from .layouts import draw_layout_case
from .mutate import break_constraint
from .plan import CellPlan, exercised_cells, plan_cells

__all__ = [
    "Target",
    "check_boundary",
    "check_cell",
    "check_example",
    "check_layout",
    "check_negative",
    "check_property",
    "check_random_layouts",
    "check_strided_rule",
]

Cell = tuple[str, str, str, str, str]  # operator, row level, tensor, kind, value
LayoutUse = tuple[str, str, str]  # operator, tensor, layout
CELL_ATTEMPTS = 8  # a backend may decline some cases of a cell (an optional field it lacks)
# Measured over 161 rules of 16 operators: every rule broken was broken from one of the first
# 16 bases (all but two from the first 3); a rule no single change breaks alone is searched
# through all of them, up to 45 s of a 2-core machine.
NEGATIVE_BASES = 16


@cache
def catalog() -> Catalog:
    return load_catalog()


@dataclass(repr=False)
class Target:
    """The backend under test and what the run has exercised."""

    backend: Any
    feature_level: str
    cells: Counter[Cell] = field(default_factory=Counter)
    layouts: Counter[LayoutUse] = field(default_factory=Counter)
    cases: int = 0  # cases the backend was given (a property test gives it many)
    checks: int = 0  # cases judged: those plus cells judged by a case another cell's test ran
    last_case: dict[str, str] | None = None  # the running test's output data type and level

    @property
    def rank(self) -> int:
        return catalog().common.feature_level(self.feature_level).rank

    def __repr__(self) -> str:
        # Hypothesis writes the repr of a property test's arguments on every example: with the
        # run's counters in it, it grew past 30 kB and warned (HypothesisWarning).
        return f"Target({getattr(self.backend, 'name', self.backend)!r}, {self.feature_level!r})"

    # The outcome of each planned cell case this process ran (one operator's at a time): the
    # cells a case exercises share its one run.
    planned_outcomes: tuple[str, dict[int, tuple[Case, Exception | None]]] = ("", {})

    def record(self, spec: OperatorSpec, case: Case) -> None:
        for tensor, layout in case.layouts:
            self.layouts[(spec.name, tensor, layout)] += 1
        for cell in exercised_cells(catalog(), spec, case.operator, case.feature_level):
            self.cells[(spec.name, *cell)] += 1


def _note(
    target: Target, spec: OperatorSpec, desc: dict[str, Any], level: str, ran: bool = True
) -> None:
    """Count a case the backend ran and remember its output data type and level for the
    report."""
    target.cases += ran
    target.checks += 1
    output = desc.get(spec.checked_kernel.output, {})
    if isinstance(output, list):  # a tensor-array output: its items share a data type
        output = output[0] if output else {}
    target.last_case = {"data_type": str(output.get("DataType", "-")), "level": level}


def _run(target: Target, spec: OperatorSpec, case: Case) -> None:
    _note(target, spec, case.operator["desc"], case.feature_level)
    try:
        run_case(catalog(), spec, target.backend, case)
    except Unsupported as reason:
        pytest.skip(f"{target.backend.name} does not implement this case: {reason}")
    target.record(spec, case)


def _level_claimed(target: Target, level: str) -> None:
    if catalog().common.feature_level(level).rank > target.rank:
        pytest.skip(
            f"{target.backend.name} claims feature level {target.feature_level}, below {level}"
        )


def check_example(target: Target, operator: str, example_id: str) -> None:
    """A documented example (its corrected form where the page is wrong)."""
    spec = catalog().operator(operator)
    example = next(e for e in spec.examples if e.id == example_id)
    desc, inputs, _ = example_operator(catalog(), spec, example.valid_form.as_dict())
    operator_json = {"type": spec.operator_type, "desc": desc}
    levels = [
        r.feature_level
        for r in spec.support
        if validate_operator(operator_json, r.feature_level).valid
    ]
    claimed = [lv for lv in levels if catalog().common.feature_level(lv).rank <= target.rank]
    if not levels:  # a spec error: the tests of the catalog hold every example valid
        problems = validate_operator(operator_json, target.feature_level).violations
        pytest.fail(
            f"example {example_id} of {spec.name} is valid at no level of its support table: "
            + "; ".join(str(p) for p in problems)
        )
    if not claimed:
        pytest.skip(f"example {example_id} is valid only from {levels[0]}")
    _run(target, spec, Case(operator_json, inputs, claimed[-1], 0))


def check_cell(
    target: Target, operator: str, level: str, tensor: str, kind: str, value: str
) -> None:
    """One support-table cell, exercised at its row's level."""
    _level_claimed(target, level)
    spec = catalog().operator(operator)
    plan = _cell_plan(operator)
    cell = (level, tensor, kind, value)
    if cell in plan.unfound:
        raise LookupError(plan.unfound[cell])
    ran = 0
    declined: Unsupported | None = None
    for case in plan.cases[cell]:  # one per support row listing the cell (REDUCE's groups)
        try:
            _run_planned(target, spec, case)
            ran += 1
        except Unsupported as reason:
            declined = reason
    if ran:
        return  # exercised, in every row group whose case the backend does not decline
    choice = CellChoice(tensor, kind, int(value) if kind == "rank" else value)
    seed = _seed(operator, level, kind, value)
    for attempt in range(1, CELL_ATTEMPTS):  # cases of the cell alone, past the declined one
        case = draw_case(catalog(), spec, level, seed + attempt, choice)
        _note(target, spec, case.operator["desc"], level)
        try:
            run_case(catalog(), spec, target.backend, case)
        except Unsupported as reason:
            declined = reason
            continue
        target.record(spec, case)
        return
    pytest.skip(f"{target.backend.name} declined {CELL_ATTEMPTS} cases of this cell: {declined}")


@functools.lru_cache(maxsize=4)  # suites run an operator's tests together
def _cell_plan(operator: str) -> CellPlan:
    return plan_cells(catalog(), catalog().operator(operator))


def _run_planned(target: Target, spec: OperatorSpec, case: Case) -> None:
    """Run a planned cell case, or repeat the outcome of its run by an earlier cell's test."""
    operator, outcomes = target.planned_outcomes
    if operator != spec.name:
        outcomes = {}
        target.planned_outcomes = (spec.name, outcomes)
    if id(case) in outcomes:
        _, outcome = outcomes[id(case)]
        _note(target, spec, case.operator["desc"], case.feature_level, ran=False)
        if outcome is not None:
            raise type(outcome)(*outcome.args)
        target.record(spec, case)
        return
    _note(target, spec, case.operator["desc"], case.feature_level)
    try:
        run_case(catalog(), spec, target.backend, case)
    except (CaseFailure, Unsupported) as outcome:
        outcomes[id(case)] = (case, outcome)  # the case kept alive: its id stays its own
        raise
    outcomes[id(case)] = (case, None)
    target.record(spec, case)


def check_property(target: Target, operator: str, seed: int) -> None:
    """A random valid case at the backend's level."""
    spec = catalog().operator(operator)
    _run(target, spec, draw_case(catalog(), spec, _highest_row_level(spec, target), seed))
    if target.last_case is not None:  # one test, many cases: no single data type
        target.last_case["data_type"] = "(random)"


def check_layout(target: Target, operator: str, layout: str) -> None:
    """A valid case with every tensor that may take `layout` (spec/common.json) laid out so."""
    spec = catalog().operator(operator)
    level = _highest_row_level(spec, target)
    case = draw_layout_case(catalog(), spec, level, _seed(operator, layout), layout)
    if case is None:
        pytest.skip(f"no tensor of {spec.name} can take the {layout} layout")
    _run(target, spec, case)


def check_random_layouts(target: Target, operator: str, seed: int) -> None:
    """A random valid case, each tensor in a layout drawn from those the spec allows it."""
    spec = catalog().operator(operator)
    case = draw_layout_case(catalog(), spec, _highest_row_level(spec, target), seed)
    if case is None:
        pytest.skip("the common spec lists no layouts")
    _run(target, spec, case)
    if target.last_case is not None:
        target.last_case["data_type"] = "(random)"


def _moving_axis(tensor: dict[str, Any]) -> int | None:
    return next((i for i, size in enumerate(tensor["Sizes"]) if size > 1), None)


def _break_strides(spec: OperatorSpec, desc: dict[str, Any], constraint_id: str) -> bool:
    """Lay one tensor of `desc` out so that it breaks this tensor rule (in place)."""
    from ..reference.tensors import numpy_dtype

    for field_ in spec.tensor_fields:
        tensor = desc.get(field_.name)
        if not isinstance(tensor, dict):
            continue
        packed = [int(np.prod(tensor["Sizes"][i + 1 :])) for i in range(len(tensor["Sizes"]))]
        if constraint_id == "TENSOR.C4":  # one stride too many
            tensor["Strides"] = [*packed, 1]
            return True
        if constraint_id == "TENSOR.C5":  # a buffer too small for the strides
            needed = int(np.prod(tensor["Sizes"])) * numpy_dtype(tensor["DataType"]).itemsize
            tensor.update(Strides=packed, TotalTensorSizeInBytes=-(-needed // 4) * 4 - 4)
            return True
        axis = _moving_axis(tensor)
        if constraint_id == "TENSOR.C10" and field_.is_output and axis is not None:
            tensor["Strides"] = [0 if i == axis else t for i, t in enumerate(packed)]
            return True
    return False


def check_strided_rule(target: Target, operator: str, constraint_id: str) -> None:
    """A valid desc with one tensor laid out to break this tensor rule (TENSOR.C4 Strides of
    the wrong length, C5 a buffer too small for them, C10 an output whose elements overlap)
    must be rejected."""
    from ..validation import validate_operator

    if not getattr(target.backend, "validates", False):
        pytest.skip(f"{target.backend.name} does not validate descs (validates is False)")
    spec = catalog().operator(operator)
    level = _highest_row_level(spec, target)
    for desc in _bases(operator, level):
        if not _break_strides(spec, desc, constraint_id):
            continue
        fired = validate_operator({"type": spec.operator_type, "desc": desc}, level).fired()
        if tuple(fired) == (constraint_id,):
            _expect_rejection(target, spec, desc, level, f"breaks only {constraint_id}")
            return
    pytest.skip(f"no drawn {spec.name} desc can break {constraint_id} alone")


def _highest_row_level(spec: OperatorSpec, target: Target) -> str:
    if not rows_at(catalog(), spec, target.feature_level):
        pytest.skip(f"{spec.name} does not exist at {target.feature_level}")
    return target.feature_level


def check_negative(target: Target, operator: str, constraint_id: str) -> None:
    """A valid desc with exactly this constraint broken must be rejected."""
    if not getattr(target.backend, "validates", False):
        pytest.skip(f"{target.backend.name} does not validate descs (validates is False)")
    spec = catalog().operator(operator)
    level = _highest_row_level(spec, target)
    broken = break_constraint(catalog(), spec, _bases(operator, level), constraint_id, level)
    if broken is None:
        highest = catalog().common.highest_feature_level.name
        if level != highest and _breakable(spec, constraint_id, highest):
            pytest.skip(
                f"at {level} every desc breaking {constraint_id} also breaks the support row; "
                f"it is tested alone from a higher level"
            )
        # The support rows may imply the rule at every level (SLICE.C4: the ranks a row allows
        # are the ranks the rule allows); the catalog's validator tests name each such rule.
        pytest.skip(f"no desc breaking only {constraint_id} was found: the rows imply it")
    _expect_rejection(target, spec, broken, level, f"breaks only {constraint_id}")


def _breakable(spec: OperatorSpec, constraint_id: str, level: str) -> bool:
    bases = _bases(spec.name, level)
    return break_constraint(catalog(), spec, bases, constraint_id, level) is not None


@cache
def _base_desc(operator: str, level: str, seed: int) -> str:
    spec = catalog().operator(operator)
    return json.dumps(draw_desc(catalog(), spec, level, random.Random(seed))["desc"])


def _bases(operator: str, level: str) -> Iterator[dict[str, Any]]:
    """Valid descs to break one constraint of, seeds 0 to NEGATIVE_BASES - 1 in order, each
    drawn when a search first gets to it (most searches end in the first) and remembered per
    operator and level; fresh copies each time: the mutation search edits them."""
    for seed in range(NEGATIVE_BASES):
        yield json.loads(_base_desc(operator, level, seed))


def check_boundary(
    target: Target, operator: str, level: str, tensor: str, kind: str, value: str
) -> None:
    """A cell introduced above the backend's level must be rejected by the backend."""
    if not getattr(target.backend, "validates", False):
        pytest.skip(f"{target.backend.name} does not validate descs (validates is False)")
    if catalog().common.feature_level(level).rank <= target.rank:
        pytest.skip(f"{target.backend.name} claims {target.feature_level}, which includes {level}")
    spec = catalog().operator(operator)
    choice = CellChoice(tensor, kind, int(value) if kind == "rank" else value)
    desc = draw_desc(
        catalog(), spec, level, random.Random(_seed(operator, level, tensor, kind, value)), choice
    )
    _expect_rejection(
        target, spec, desc["desc"], level, f"uses {tensor} {kind} {value}, introduced at {level}"
    )


def _expect_rejection(
    target: Target, spec: OperatorSpec, desc: dict[str, Any], level: str, why: str
) -> None:
    operator = {"type": spec.operator_type, "desc": desc}
    _note(target, spec, desc, level)
    inputs = {}
    for field_ in spec.tensor_fields:
        if not field_.is_output and field_.name in desc:
            dtype = catalog().common.data_type(desc[field_.name]["DataType"]).numpy or "float32"
            inputs[field_.name] = np.zeros(desc[field_.name]["Sizes"], dtype=dtype)
    try:
        target.backend.run(operator, inputs)
    except InvalidOperator:
        return
    except Unsupported as reason:
        pytest.skip(f"{target.backend.name} does not implement this case: {reason}")
    except Exception as error:
        pytest.fail(
            f"{target.backend.name} raised {type(error).__name__} instead of InvalidOperator "
            f"for a desc that {why}: {error}\n{json.dumps(operator)}"
        )
    pytest.fail(f"{target.backend.name} accepted a desc that {why}:\n{json.dumps(operator)}")


def _seed(*parts: str) -> int:
    """A stable seed per test (not Python's salted hash)."""
    import zlib

    return zlib.crc32("/".join(parts).encode())
