"""The generated validators: every rule fires alone, every support cell is honoured, and no
input makes them (or the CLI) crash."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlspec import InvalidOperator, load_catalog
from dmlspec.cli import main
from dmlspec.model import Catalog, ExampleTensor
from dmlspec.validation import check_requires, requires_hold, validate_operator

from .conftest import REPO_ROOT
from .descs import FACTORIES, data_type_group, mutations, operator, rederive, set_slot

CATALOG = load_catalog()
HIGHEST = CATALOG.common.highest_feature_level.name
SEEDS = [spec for spec in CATALOG.operators if spec.name in FACTORIES]
ERROR_CONSTRAINTS = [
    (spec.name, c.id) for spec in SEEDS for c in spec.constraints if c.constraint_class == "error"
]


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("rank", range(1, 9))
def test_factories_give_valid_descs_of_every_rank(name: str, rank: int) -> None:
    spec = CATALOG.operator(name)
    result = validate_operator(operator(spec, FACTORIES[name](rank)), HIGHEST)
    assert result.valid, result.violations


def test_every_operator_with_a_kernel_has_a_factory() -> None:
    """The seeds' hand-written factories; the rest of the catalog is tested from
    `base_desc` in test_catalog_validators.py."""
    seeds = ["FILL_VALUE_SEQUENCE", "GATHER_ND", "SCATTER_ELEMENTS", "SCATTER_ND"]
    assert all(CATALOG.operator(name).kernel is not None for name in seeds)
    assert sorted(FACTORIES) == seeds


@pytest.mark.parametrize(
    ("name", "constraint_id"), ERROR_CONSTRAINTS, ids=[c for _, c in ERROR_CONSTRAINTS]
)
def test_breaking_one_constraint_fires_exactly_that_constraint(
    name: str, constraint_id: str
) -> None:
    spec = CATALOG.operator(name)
    tried = []
    for rank in (2, 3):
        base = FACTORIES[name](rank)
        for label, changed, desc in mutations(spec, base):
            fixed = rederive(CATALOG, spec, desc, keep=changed, exclude=(constraint_id,))
            if fixed is None:
                continue
            result = validate_operator(operator(spec, fixed), HIGHEST)
            tried.append((label, result.fired()))
            if result.fired() == (constraint_id,):
                message = result.violations[0].message
                assert spec.constraint(constraint_id).message in message
                return
    pytest.fail(f"no single change broke only {constraint_id}; tried {tried}")


TENSOR_RULE_BREAKS = {
    "TENSOR.C2": {"DimensionCount": 2},
    "TENSOR.C3": {"Sizes": [1, 0, 3]},
    "TENSOR.C4": {"Strides": [3, 1]},
    "TENSOR.C5": {"TotalTensorSizeInBytes": 8},
    "TENSOR.C6": {"TotalTensorSizeInBytes": 14},
    "TENSOR.C7": {"Sizes": [1, 65536, 65536]},
    "TENSOR.C8": {"GuaranteedBaseOffsetAlignment": 2},
    "TENSOR.C9": {"Flags": "DML_TENSOR_FLAG_OWNED_BY_DML"},
}


@pytest.mark.parametrize("rule", sorted(TENSOR_RULE_BREAKS))
def test_each_tensor_rule_fires_alone(rule: str) -> None:
    spec = CATALOG.operator("FILL_VALUE_SEQUENCE")
    desc = FACTORIES[spec.name](3)
    change = TENSOR_RULE_BREAKS[rule]
    desc["OutputTensor"].update(change)
    result = validate_operator(operator(spec, desc), "5_0")
    assert result.fired() == (rule,), result.violations
    assert result.violations[0].path.startswith("/desc/OutputTensor")


def test_too_many_dimensions_for_the_level_breaks_tensor_c1_and_the_support_row() -> None:
    spec = CATALOG.operator("FILL_VALUE_SEQUENCE")
    result = validate_operator(operator(spec, FACTORIES[spec.name](6)), "2_1")
    assert result.fired() == ("TENSOR.C1", "SUPPORT.dimension_count")
    assert "DimensionCountMax = 5" in result.violations[0].message


def _support_cases() -> list[tuple[str, str, str, str, object]]:
    cases = []
    for spec in SEEDS:
        for row in spec.support:
            for cell in row.tensors:
                cases += [
                    (spec.name, row.feature_level, cell.tensor, "data_type", t)
                    for t in cell.data_types
                ]
                cases += [
                    (spec.name, row.feature_level, cell.tensor, "rank", n)
                    for n in cell.dimension_counts
                ]
    return cases


SUPPORT_CASES = _support_cases()


def _with_cell(catalog: Catalog, name: str, tensor: str, kind: str, value: Any) -> dict[str, Any]:
    """A valid desc of `name` whose `tensor` has the cell's data type or rank."""
    spec = catalog.operator(name)
    if kind == "rank":
        return operator(spec, FACTORIES[name](int(value)))
    desc = FACTORIES[name](4)
    for slot in data_type_group(spec, f"{tensor}.DataType"):
        set_slot(desc, slot, str(value))
    return operator(spec, desc)


@pytest.mark.parametrize(
    ("name", "level", "tensor", "kind", "value"),
    SUPPORT_CASES,
    ids=[f"{n}-{lv}-{t}-{v}" for n, lv, t, k, v in SUPPORT_CASES],
)
def test_support_cell_is_accepted_from_its_level_and_rejected_before(
    name: str, level: str, tensor: str, kind: str, value: object
) -> None:
    spec = CATALOG.operator(name)
    common = CATALOG.common
    op = _with_cell(CATALOG, name, tensor, kind, value)
    rank = common.feature_level(level).rank
    later = [lv.name for lv in common.feature_levels if lv.rank >= rank]
    for at in later:
        row = CATALOG.support_row_at(spec, at)
        assert row is not None
        allowed = all(
            op["desc"][c.tensor]["DataType"] in c.data_types
            and len(op["desc"][c.tensor]["Sizes"]) in c.dimension_counts
            for c in row.tensors
        )
        if allowed:
            result = validate_operator(op, at)
            assert result.valid, (at, result.violations)
    earlier = [lv.name for lv in common.feature_levels if lv.rank < rank]
    for at in earlier:
        row = CATALOG.support_row_at(spec, at)
        cell_ok = row is not None and (
            value in row.tensor(tensor).data_types
            if kind == "data_type"
            else value in row.tensor(tensor).dimension_counts
        )
        if cell_ok:
            continue
        fired = validate_operator(op, at).fired()
        expected = (
            "LEVEL.operator"
            if row is None
            else f"SUPPORT.{'data_type' if kind == 'data_type' else 'dimension_count'}"
        )
        assert expected in fired, (at, fired)


def test_support_violation_names_the_rule_the_allowed_values_and_the_value() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    op = operator(spec, FACTORIES["SCATTER_ND"](4))
    op["desc"]["IndicesTensor"]["DataType"] = "INT64"
    result = validate_operator(op, "2_1")
    assert [str(v) for v in result.violations] == [
        "SUPPORT.data_type /desc/IndicesTensor/DataType: IndicesTensor.DataType must be one of "
        "UINT32 for SCATTER_ND at feature level 2_1 (the 2_1 row); got INT64; INT64 is supported "
        "from 3_0"
    ]


def test_constraint_violation_shows_the_operand_values() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    op = operator(spec, FACTORIES["SCATTER_ND"](2))
    op["desc"]["UpdatesTensor"]["Sizes"] = [1, 3]
    (violation,) = validate_operator(op).violations
    assert violation.constraint == "SCATTER_ND.C8"
    assert violation.path == "/desc/UpdatesTensor/Sizes"
    assert violation.message.endswith(
        "(UpdatesTensor.Sizes = [1, 3]; ExpectedUpdatesSizes = [1, 4])"
    )


def test_shape_errors_name_the_field_and_the_allowed_values() -> None:
    spec = CATALOG.operator("SCATTER")
    op = operator(spec, FACTORIES["SCATTER_ELEMENTS"](2))
    del op["desc"]["Axis"]
    op["desc"]["Colour"] = 1
    op["desc"]["InputTensor"]["DataType"] = "FLOAT128"
    messages = [str(v) for v in validate_operator(op).violations]
    assert messages[:3] == [
        "JSON.unknown_field /desc/Colour: SCATTER_ELEMENTS has no field 'Colour' (fields: "
        "InputTensor, IndicesTensor, UpdatesTensor, OutputTensor, Axis)",
        "JSON.enum_value /desc/InputTensor/DataType: InputTensor.DataType must be one of UNKNOWN, "
        "FLOAT32, FLOAT16, UINT32, UINT16, UINT8, INT32, INT16, INT8, FLOAT64, UINT64, INT64, "
        "UINT4, INT4 (with or without DML_TENSOR_DATA_TYPE_); got 'FLOAT128'",
        "JSON.required_field /desc/Axis: SCATTER_ELEMENTS requires the field Axis (a UINT)",
    ]


def test_prefixes_aliases_and_the_long_tensor_form_are_accepted() -> None:
    desc = FACTORIES["SCATTER_ELEMENTS"](2)
    desc["InputTensor"] = {
        "Type": "DML_TENSOR_TYPE_BUFFER",
        "Desc": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": desc["InputTensor"]["Sizes"]},
    }
    for name in ("SCATTER", "DML_OPERATOR_SCATTER", "SCATTER_ELEMENTS"):
        result = validate_operator({"type": name, "desc": desc}, "DML_FEATURE_LEVEL_3_0")
        assert result.valid, result.violations


def test_operator_introduced_later_is_rejected_at_an_earlier_level() -> None:
    spec = CATALOG.operator("SCATTER_ND")
    result = validate_operator(operator(spec, FACTORIES["SCATTER_ND"](4)), "2_0")
    assert result.fired()[0] == "LEVEL.operator"


def test_scalar_union_read_differently_is_a_warning() -> None:
    spec = CATALOG.operator("FILL_VALUE_SEQUENCE")
    desc = FACTORIES[spec.name](4)
    desc.update(ValueDataType="UINT8", ValueDelta=-2)
    desc["OutputTensor"]["DataType"] = "UINT8"
    result = validate_operator(operator(spec, desc), "2_1")
    assert result.valid
    assert [str(w) for w in result.warnings] == [
        "warning /desc/ValueDelta: ValueDelta -2 is not a UINT8 value; as ValueDataType UINT8 it "
        "is read as 254"
    ]


def test_requires_report_the_undefined_cells() -> None:
    spec = CATALOG.operator("SCATTER")
    example = next(e for e in spec.examples if e.id == "example_1_1d_scatter")
    fields = {k: v.to_json() if isinstance(v, ExampleTensor) else v for k, v in example.as_written}
    desc = {
        k: ({m: x for m, x in v.items() if m != "Values"} if isinstance(v, dict) else v)
        for k, v in fields.items()
    }
    inputs = {
        k: np.array(v["Values"], dtype=np.float32 if k != "IndicesTensor" else np.uint32)
        for k, v in fields.items()
        if isinstance(v, dict) and k != "OutputTensor"
    }
    report = check_requires(operator(spec, desc), inputs, "3_0")
    assert report.violations[0].constraint == "SCATTER_ELEMENTS.R2"
    assert report.undefined["OutputTensor"].tolist() == [False, False, False, True, False]
    assert report.allowed["OutputTensor"] == "one_of_colliding_updates"


def test_requires_on_gather_and_scatter_nd_mark_rows_and_slices() -> None:
    gather = CATALOG.operator("GATHER_ND")
    op = operator(gather, FACTORIES["GATHER_ND"](2))
    report = check_requires(
        op, {"IndicesTensor": np.array([[1], [9], [2], [-1]], dtype=np.int64)}, HIGHEST
    )
    assert [v.constraint for v in report.violations] == ["GATHER_ND.R1"]
    assert report.undefined["OutputTensor"].tolist() == [[False, True, False, False]]
    scatter = CATALOG.operator("SCATTER_ND")
    op = operator(scatter, FACTORIES["SCATTER_ND"](2))
    op["desc"]["IndicesTensor"]["DataType"] = "INT32"
    report = check_requires(
        op, {"IndicesTensor": np.array([[1], [6], [-7], [3]], dtype=np.int32)}, HIGHEST
    )
    assert [v.constraint for v in report.violations] == ["SCATTER_ND.R2"]
    assert np.nonzero(report.undefined["OutputTensor"][0])[0].tolist() == [1]
    assert "= [False  True False  True]" in report.violations[0].message  # operands shown
    assert not requires_hold(op, {"IndicesTensor": np.array([[1], [6], [-7], [3]], np.int32)})
    inside = {"IndicesTensor": np.array([[1], [0], [-2], [3]], dtype=np.int32)}
    assert check_requires(op, inside, HIGHEST).satisfied and requires_hold(op, inside, HIGHEST)
    with pytest.raises(InvalidOperator) as raised:
        check_requires({"type": "SCATTER_ND", "desc": {}}, {})
    assert "JSON.required_field" in raised.value.constraint_ids


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**65), 2**65) | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, level=st.sampled_from([None, "1_0", "3_0", HIGHEST]))
def test_arbitrary_json_never_crashes_the_validator(value: object, level: str | None) -> None:
    for candidate in (
        value,
        {"type": "SCATTER_ND", "desc": value},
        {"type": "FILL_VALUE_SEQUENCE", "desc": value},
    ):
        result = validate_operator(candidate, level)
        assert isinstance(result.valid, bool)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(FACTORIES)),
    rank=st.integers(1, 8),
    data=st.data(),
)
def test_mutated_valid_descs_never_crash_the_validator(
    name: str, rank: int, data: st.DataObject
) -> None:
    spec = CATALOG.operator(name)
    desc = copy.deepcopy(FACTORIES[name](rank))
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(sorted(desc)))
        if isinstance(desc[field], dict) and data.draw(st.booleans()):
            member = data.draw(
                st.sampled_from(
                    [*sorted(desc[field]), "Strides", "Flags", "TotalTensorSizeInBytes"]
                )
            )
            desc[field][member] = data.draw(json_values)
        else:
            desc[field] = data.draw(json_values)
    result = validate_operator(operator(spec, desc))
    assert isinstance(result.to_json()["violations"], list)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=json_values, as_model=st.booleans())
def test_cli_validate_never_crashes(
    value: object, as_model: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("cli") / "op.json"
    content = {"dispatchables": {"x": value}} if as_model else value
    path.write_text(json.dumps(content, allow_nan=True))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["validate", str(path), "--json"])
    assert code in (0, 1, 2)
    assert "Traceback" not in err.getvalue()
    if code in (0, 1):
        json.loads(out.getvalue())


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args], capture_output=True, text=True, cwd=REPO_ROOT
    )


def test_cli_validate_dxdispatch_fill_model(shared_dir: Path) -> None:
    model = shared_dir / "reference" / "dxdispatch" / "dml_fill_value_sequence.json"
    result = run_cli("validate", str(model))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].endswith("['fill_sequence']: valid at feature level 6_4")
    as_json = json.loads(run_cli("validate", str(model), "--json", "--feature-level", "2_1").stdout)
    assert as_json == {"fill_sequence": {"valid": True, "violations": [], "warnings": []}}


def test_cli_validate_exit_codes(tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.json"
    op = operator(CATALOG.operator("GATHER_ND"), FACTORIES["GATHER_ND"](2))
    op["desc"]["InputDimensionCount"] = 5
    invalid.write_text(json.dumps(op))
    result = run_cli("validate", str(invalid))
    assert result.returncode == 1
    assert result.stdout.splitlines()[1].startswith("  GATHER_ND.C4 /desc/InputDimensionCount: ")
    as_json = json.loads(run_cli("validate", str(invalid), "--json").stdout)
    assert as_json["valid"] is False and as_json["violations"][0]["constraint"] == "GATHER_ND.C4"
    duplicate = tmp_path / "duplicate.json"
    duplicate.write_text('{"type": "GATHER_ND", "type": "SCATTER", "desc": {}}')
    bad = run_cli("validate", str(duplicate))
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"dmlspec: {duplicate}: at /type: duplicate key 'type'"
    not_an_operator = tmp_path / "list.json"
    not_an_operator.write_text("[1, 2]")
    assert run_cli("validate", str(not_an_operator)).returncode == 2
    level = run_cli("validate", str(invalid), "--feature-level", "7_0")
    assert level.returncode == 2 and "unknown feature level '7_0'" in level.stderr


def test_cli_lint_backs_every_erratum() -> None:
    result = run_cli("lint")
    assert result.returncode == 0, result.stdout
    summary = result.stdout.rstrip().splitlines()[-1]
    assert summary.startswith(
        f"{sum(len(s.examples) for s in CATALOG.operators)} examples: all consistent"
    )
    rows = {line.split()[1]: line for line in result.stdout.splitlines()[1:-1]}
    assert "SCATTER_ND.C1" in rows["example"] and "backed" in rows["example"]
    assert "SCATTER_ELEMENTS.C5" in rows["example_2_2d_scatter"]
