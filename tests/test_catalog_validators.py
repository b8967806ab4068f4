"""The generated validators of every operator: a valid desc exists, each error constraint
broken alone fires exactly its id, every support cell is accepted at its level and rejected
below it, and fuzzed descs never crash the validator."""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlspec import load_catalog
from dmlspec.conformance import mutate, suite
from dmlspec.conformance.base_desc import base_desc, base_descs
from dmlspec.conformance.descs import draw_desc, type_groups
from dmlspec.conformance.mutate import break_constraint
from dmlspec.model import OperatorSpec
from dmlspec.validation import check_requires, validate_operator

CATALOG = load_catalog()
HIGHEST = CATALOG.common.highest_feature_level.name
OPERATORS = [spec.name for spec in CATALOG.operators]
# Operators no desc of which is valid as their specs stand (FOLD and UNFOLD were, while their
# pages' empty data-type cells stood unamended; their specs now record the assumed types).
NO_VALID_DESC: set[str] = set()
# Rules no single change can break without breaking a support row too, and why.
UNBREAKABLE_ALONE = {
    "ADAM_OPTIMIZER.C2": "every ADAM_OPTIMIZER tensor supports exactly 4 dimensions at every "
    "level, so a DimensionCount mismatch always breaks SUPPORT.dimension_count as well",
    "LOCAL_RESPONSE_NORMALIZATION.C4": "its only support row allows 4 dimensions alone, so a "
    "rank other than 4 breaks SUPPORT.dimension_count as well",
    "LOCAL_RESPONSE_NORMALIZATION_GRAD.C4": "as LOCAL_RESPONSE_NORMALIZATION.C4",
    "MEAN_VARIANCE_NORMALIZATION2.C5": "a rule of levels below 5_2 on an operator introduced at "
    "6_3: it holds wherever the operator exists (the page states it; the spec notes why)",
    "FOLD.C4": "DimensionCount is the output's rank less 2 (C3): a count outside 1..6 breaks C3 "
    "or the support row's dimension counts as well",
    "FOLD.C5": "the patch tensor's one support row allows 3 dimensions alone, so another rank "
    "breaks SUPPORT.dimension_count (and C10's sizes) as well",
    "FOLD.C6": "a window of 0 changes BlockCount, so the patch tensor's sizes (C10) break as well",
    "UNFOLD.C4": "DimensionCount is the input's rank less 2 (C3): a count outside 1..6 breaks C3 "
    "or the support row's dimension counts as well",
    "UNFOLD.C5": "the patch tensor's one support row allows 3 dimensions alone, so another rank "
    "breaks SUPPORT.dimension_count (and C10's sizes) as well",
    "UNFOLD.C6": "a window of 0 changes BlockCount, so the patch tensor's sizes (C10) break as "
    "well",
    "QUANTIZE.C8": "the mutations change whole tensors' sizes, not one item of a tensor array "
    "(the zero point alone); tests/test_quantization_family.py breaks it alone",
    "DEQUANTIZE.C8": "as QUANTIZE.C8",
    "CONVOLUTION.C8": "the built base descs have GroupCount 1 and channels of 1: one change to "
    "GroupCount breaks C7 (FORWARD's input channels) as well; tests/test_convolution_family.py "
    "breaks it alone from a grouped desc",
    "CONVOLUTION.C9": "a BACKWARD rule, and the built base descs are FORWARD (a Direction of "
    "BACKWARD is one change, a filter size a second); tests/test_convolution_family.py breaks "
    "it alone from a BACKWARD desc",
    "CONVOLUTION.C10": "as CONVOLUTION.C9",
    "CONVOLUTION.C11": "the base descs' windows of 1 fit any padded input; a window that does "
    "not fit takes a filter size the single changes do not try; tests/test_convolution_family.py "
    "breaks it alone",
    "CONVOLUTION.C14": "as CONVOLUTION.C9",
    "CONVOLUTION_INTEGER.C11": "as CONVOLUTION.C8 (FilterBatchCount a multiple of GroupCount); "
    "tests/test_convolution_family.py breaks it alone",
    "CONVOLUTION_INTEGER.C12": "as CONVOLUTION.C11 (the window fits)",
    "QUANTIZED_LINEAR_CONVOLUTION.C12": "as CONVOLUTION_INTEGER.C11",
    "QUANTIZED_LINEAR_CONVOLUTION.C13": "as CONVOLUTION_INTEGER.C12",
    "MAX_UNPOOLING.C3": "every support row allows 4 dimensions alone, so another output rank "
    "breaks SUPPORT.dimension_count as well",
    "NONZERO_COORDINATES.C2": "every support row allows only UINT32 for OutputCountTensor, so "
    "another type breaks SUPPORT.data_type as well",
    "SLICE.C4": "the rank allowed below 3_0 (4 or 5) is what the support rows allow too, so a "
    "rank this rule rejects is rejected by SUPPORT.dimension_count as well",
    "MULTIHEAD_ATTENTION.C9": "the base descs give the query, key and value unstacked or "
    "in the other stacked forms (their presence rules allow one form at a time); "
    "tests/test_attention.py breaks it from a StackedQueryKeyValueTensor desc",
    "MULTIHEAD_ATTENTION.C13": "as C9: tests/test_attention.py breaks it from a "
    "StackedKeyValueTensor desc",
    "MULTIHEAD_ATTENTION.C14": "as C9: tests/test_attention.py breaks it from a "
    "StackedQueryKeyValueTensor desc",
    "MULTIHEAD_ATTENTION1.C9": "as MULTIHEAD_ATTENTION.C9: tests/test_attention_grouped.py "
    "breaks it from a StackedQueryKeyValueTensor desc",
    "MULTIHEAD_ATTENTION1.C11": "as C9, from a StackedKeyValueTensor desc",
    "MULTIHEAD_ATTENTION1.C13": "as C9, from a StackedKeyValueTensor desc",
    "MULTIHEAD_ATTENTION1.C14": "as C9",
    "MULTIHEAD_ATTENTION1.C27": "a head count changed alone changes the key's, value's, bias's "
    "and past tensors' sizes too; tests/test_attention_grouped.py breaks it alone",
    "MULTIHEAD_ATTENTION1.C28": "as C27, from a StackedQueryKeyTensor desc",
    "MULTIHEAD_ATTENTION1.C29": "draws leave PastSequenceLengthsTensor out unless a cell forces "
    "it (its presence leaves the outputs undefined, R2-R4), so no base desc has one; "
    "tests/test_attention_grouped.py breaks it",
    "SLICE1.C5": "as SLICE.C4",
    "GATHER.C7": "it fails only when Axis addresses a leading 1 of InputTensor and IndexDimensions "
    "> 1 brings a non-1 index size into the cropped part; one changed value of a valid desc "
    "never does both",
    "GATHER_ND1.C8": "BatchDimensionCount >= IndicesDimensionCount passes C7 only with an "
    "InputDimensionCount above both; one changed value of the base descs never gets there",
    "UPSAMPLE_2D.C3": "the single changes do not edit a DML_SIZE_2D's members (ScaleSize); "
    "tests/test_resampling_family.py breaks it alone",
    "UPSAMPLE_2D.C4": "as UPSAMPLE_2D.C3",
}
BASES = {spec.name: base_desc(CATALOG, spec) for spec in CATALOG.operators}


def operator(spec: OperatorSpec, desc: dict[str, Any]) -> dict[str, Any]:
    return {"type": spec.operator_type, "desc": desc}


def test_every_operator_has_a_valid_base_desc() -> None:
    assert {name for name, desc in BASES.items() if desc is None} == NO_VALID_DESC
    for spec in CATALOG.operators:
        if BASES[spec.name] is not None:
            assert validate_operator(operator(spec, BASES[spec.name]), HIGHEST).valid


@pytest.mark.parametrize("name", [n for n in OPERATORS if n not in NO_VALID_DESC])
def test_each_error_constraint_broken_alone_fires_exactly_its_id(name: str) -> None:
    spec = CATALOG.operator(name)
    base = BASES[name]
    assert base is not None
    unbroken = []
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        # Rules that change with the level break at a lower one: try each documented one.
        documented = [spec.introduced, *(r.feature_level for r in spec.support)]
        broken, level = None, HIGHEST
        for level in [HIGHEST, *reversed(dict.fromkeys(documented))]:
            bases = base_descs(CATALOG, spec, level)
            broken = break_constraint(CATALOG, spec, bases, constraint.id, level)
            if broken is not None:
                break
        if broken is None:
            unbroken.append(constraint.id)
            continue
        result = validate_operator(operator(spec, broken), level)
        assert result.fired() == (constraint.id,)
        assert constraint.message in result.violations[0].message
    assert unbroken == [c for c in UNBREAKABLE_ALONE if c.startswith(name + ".")]


def test_base_descs_are_found_once_and_returned_as_fresh_copies() -> None:
    spec = CATALOG.operator("MULTIHEAD_ATTENTION")  # drawn: none can be built
    first = base_descs(CATALOG, spec, HIGHEST)
    kept = copy.deepcopy(first)
    first[0].clear()
    assert base_descs(CATALOG, spec, HIGHEST) == kept
    assert all(validate_operator(operator(spec, d), HIGHEST).valid for d in kept)


def test_the_negative_search_remembers_candidates_but_returns_fresh_descs() -> None:
    # break_constraint remembers each candidate's re-derived form and fired rules: a second
    # search returns the same desc, and a caller's edits to the first never reach it. SCATTER_ND
    # has rules the re-derivation leaves out (they define sizes) and rules it keeps.
    spec = CATALOG.operator("SCATTER_ND")
    bases = base_descs(CATALOG, spec, HIGHEST)
    kinds = set()
    for constraint in (c for c in spec.constraints if c.constraint_class == "error"):
        first = break_constraint(CATALOG, spec, bases, constraint.id, HIGHEST)
        if first is None:
            continue
        kept = copy.deepcopy(first)
        first.clear()
        again = break_constraint(CATALOG, spec, bases, constraint.id, HIGHEST)
        assert again == kept
        assert validate_operator(operator(spec, kept), HIGHEST).fired() == (constraint.id,)
        kinds.add(mutate._derives(spec, constraint.id))
    assert kinds == {True, False}


def test_the_negative_search_knows_which_fields_a_rule_and_its_dependencies_read() -> None:
    spec = CATALOG.operator("GATHER_ND1")
    assert mutate._fields_read(spec, "GATHER_ND1.C2") == {"InputTensor", "OutputTensor"}
    # C8 reads the two counts; it depends on C5 (IndicesTensor) and C6 (both tensors).
    assert mutate._fields_read(spec, "GATHER_ND1.C8") == {
        "BatchDimensionCount",
        "IndicesDimensionCount",
        "IndicesTensor",
        "InputTensor",
    }


@pytest.mark.parametrize("name", ["GATHER_ND1", "PADDING1", "SCATTER_ND", "TOP_K1"])
def test_the_negative_search_finds_what_it_found_without_skipping_candidates(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A candidate that leaves every field the rule (and what it depends on) reads as the valid
    # base had it cannot break that rule, so the search skips it: the same descs are found.
    spec = CATALOG.operator(name)
    errors = [c.id for c in spec.constraints if c.constraint_class == "error"]
    found = [
        break_constraint(CATALOG, spec, suite._bases(name, HIGHEST), c, HIGHEST) for c in errors
    ]
    monkeypatch.setattr(mutate, "_fields_read", lambda spec, constraint_id: None)
    unskipped = [
        break_constraint(CATALOG, spec, suite._bases(name, HIGHEST), c, HIGHEST) for c in errors
    ]
    assert found == unskipped
    assert any(f is not None for f in found)


def test_the_suite_draws_negative_bases_as_the_search_reaches_them() -> None:
    # The suite's bases are the descs drawn from seeds 0, 1, ... in order; most searches end
    # in the first, so each is drawn when a search first gets to it, and given as a fresh copy.
    suite._base_desc.cache_clear()
    first = next(suite._bases("SCATTER_ND", HIGHEST))
    assert suite._base_desc.cache_info().currsize == 1
    spec = CATALOG.operator("SCATTER_ND")
    drawn = [
        draw_desc(CATALOG, spec, HIGHEST, random.Random(seed))["desc"]
        for seed in range(suite.NEGATIVE_BASES)
    ]
    every = list(suite._bases("SCATTER_ND", HIGHEST))
    assert every == drawn and first == drawn[0]
    every[0].clear()
    assert next(suite._bases("SCATTER_ND", HIGHEST)) == drawn[0]


def _with_cell(
    spec: OperatorSpec, base: dict[str, Any], tensor: str, kind: str, value: Any
) -> dict[str, Any] | None:
    desc = copy.deepcopy(base)
    if tensor not in desc:
        return None
    targets = desc[tensor] if isinstance(desc[tensor], list) else [desc[tensor]]
    if kind == "rank":
        for item in targets:
            item["Sizes"] = [1] * int(value)
        return desc
    group = next(
        (g for g in type_groups(spec, "DataType") if f"{tensor}.DataType" in g),
        {f"{tensor}.DataType"},
    )
    for slot in group:
        owner, _, member = slot.partition(".")
        items = desc.get(owner)
        for item in items if isinstance(items, list) else [items]:
            if isinstance(item, dict) and member:
                item[member] = value
            elif not member and owner in desc:
                desc[owner] = value
    for item in targets:
        item["DataType"] = value
    return desc


@pytest.mark.parametrize("name", [n for n in OPERATORS if n not in NO_VALID_DESC])
def test_every_support_cell_is_accepted_at_its_level_and_rejected_below(name: str) -> None:
    spec = CATALOG.operator(name)
    common = CATALOG.common
    checked = 0
    for index, row in enumerate(spec.support):
        if row.when is not None:
            continue  # per-function rows: REDUCE's functions are checked in its own tests
        previous = next((r for r in reversed(spec.support[:index]) if r.when is None), None)
        below = [
            lv
            for lv in common.feature_levels
            if lv.rank < common.feature_level(row.feature_level).rank
        ]
        base = base_desc(CATALOG, spec, row.feature_level)  # valid in this row
        assert base is not None, row.feature_level
        for cell in row.tensors:
            values = [("data_type", t) for t in cell.data_types]
            values += [("rank", n) for n in cell.dimension_counts]
            for kind, value in values:
                desc = _with_cell(spec, base, cell.tensor, kind, value)
                if desc is None:
                    continue
                op = operator(spec, desc)
                result = validate_operator(op, row.feature_level)
                support_fired = [v for v in result.fired() if v.startswith(("SUPPORT.", "LEVEL."))]
                # Another tensor of the desc may not allow the value (a fixed output type,
                # a rank another cell lacks); only this cell's own verdict is checked.
                own = [
                    v
                    for v in result.violations
                    if v.constraint.startswith("SUPPORT.") and f"/desc/{cell.tensor}" in v.path
                ]
                assert own == [], (row.feature_level, cell.tensor, value, support_fired)
                checked += 1
                if not below:
                    continue
                allowed_before = previous is not None and (
                    value in previous.tensor(cell.tensor).data_types
                    if kind == "data_type"
                    else value in previous.tensor(cell.tensor).dimension_counts
                )
                if allowed_before:
                    continue
                earlier = validate_operator(op, below[-1].name).fired()
                expected = (
                    "LEVEL.operator"
                    if previous is None
                    else "SUPPORT.data_type"
                    if kind == "data_type"
                    else "SUPPORT.dimension_count"
                )
                assert expected in earlier, (below[-1].name, cell.tensor, value, earlier)
    assert checked > 0 or all(row.when is not None for row in spec.support)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**65), 2**65) | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from([n for n in OPERATORS if n not in NO_VALID_DESC]),
    data=st.data(),
)
def test_fuzzed_descs_of_any_operator_never_crash_the_validator(
    name: str, data: st.DataObject
) -> None:
    spec = CATALOG.operator(name)
    desc = copy.deepcopy(BASES[name]) or {}
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(sorted({*desc, *(f.name for f in spec.fields)})))
        value = desc.get(field)
        if isinstance(value, dict) and data.draw(st.booleans()):
            member = data.draw(st.sampled_from([*sorted(value), "Strides", "Type", "Desc"]))
            value[member] = data.draw(json_values)
        elif isinstance(value, list) and value and data.draw(st.booleans()):
            value[data.draw(st.integers(0, len(value) - 1))] = data.draw(json_values)
        else:
            desc[field] = data.draw(json_values)
    level = data.draw(st.sampled_from([None, "1_0", "3_0", "5_0", HIGHEST]))
    result = validate_operator(operator(spec, desc), level)
    assert isinstance(result.to_json()["violations"], list)


def test_fused_activations_are_checked_against_their_operator_set() -> None:
    spec = CATALOG.operator("ELEMENT_WISE_ADD1")
    desc = copy.deepcopy(BASES["ELEMENT_WISE_ADD1"])
    assert desc is not None
    desc["FusedActivation"] = {"Type": "ACTIVATION_ELU", "Alpha": 0.5}
    assert validate_operator(operator(spec, desc)).valid
    desc["FusedActivation"] = {"Type": "ACTIVATION_ELU", "Desc": {"Alpha": 0.5}}
    assert validate_operator(operator(spec, desc)).valid
    desc["FusedActivation"] = {"Type": "ELEMENT_WISE_ADD", "Alpha": 0.5}
    (violation,) = validate_operator(operator(spec, desc)).violations
    assert violation.constraint == "JSON.operator_type"
    assert "FusedActivation.Type must be one of ACTIVATION_CELU" in violation.message
    desc["FusedActivation"] = {"Type": "ACTIVATION_ELU", "Beta": 1}
    fired = [str(v) for v in validate_operator(operator(spec, desc)).violations]
    assert any("no field 'Beta'" in v for v in fired) and any(
        "requires the field Alpha" in v for v in fired
    )


def test_an_operator_desc_field_holds_an_operator_from_its_level() -> None:
    """A fused activation exists from its operator's introduction level (GELU: 5_1), and one
    that joined the fused set later from that level (the history adds ELEMENT_WISE_CLIP at
    6_0); RNN's activation arrays are read item by item."""
    spec = CATALOG.operator("ELEMENT_WISE_ADD1")
    desc = copy.deepcopy(BASES["ELEMENT_WISE_ADD1"])
    assert desc is not None
    cases = (
        ({"Type": "ACTIVATION_GELU"}, "5_1", "DML_OPERATOR_ACTIVATION_GELU was introduced in"),
        (
            {"Type": "ELEMENT_WISE_CLIP", "Min": 0.0, "Max": 1.0},
            "6_0",
            "FUSED_ACTIVATIONS holds ELEMENT_WISE_CLIP from",
        ),
    )
    for fused, since, reason in cases:
        desc["FusedActivation"] = fused
        assert validate_operator(operator(spec, desc), since).valid
        below = CATALOG.common.feature_levels[CATALOG.common.level_rank(since) - 1].name
        (violation,) = validate_operator(operator(spec, desc), below).violations
        assert violation.constraint == "LEVEL.operator_desc"
        assert violation.path == "/desc/FusedActivation/Type"
        assert violation.message == (
            f"FusedActivation.Type {fused['Type']}: {reason} DML_FEATURE_LEVEL_{since}; "
            f"it cannot be held at {below}"
        )
    rnn = CATALOG.operator("RNN")
    rnn_desc = copy.deepcopy(BASES["RNN"])
    assert rnn_desc is not None and rnn_desc["ActivationDescCount"] >= 1
    rnn_desc["ActivationDescs"][-1] = {"Type": "ACTIVATION_GELU"}
    assert validate_operator(operator(rnn, rnn_desc), "5_1").valid
    (violation,) = validate_operator(operator(rnn, rnn_desc), "5_0").violations
    last = rnn_desc["ActivationDescCount"] - 1
    assert (violation.constraint, violation.path) == (
        "LEVEL.operator_desc",
        f"/desc/ActivationDescs/{last}/Type",
    )


def test_arrays_must_have_their_count_field_items() -> None:
    spec = CATALOG.operator("JOIN")
    desc = copy.deepcopy(BASES["JOIN"])
    assert desc is not None
    desc["InputCount"] = len(desc["InputTensors"]) + 1
    fired = validate_operator(operator(spec, desc)).violations
    assert [v.constraint for v in fired] == ["JSON.array_count"]
    assert fired[0].message == (
        f"InputTensors must have InputCount ({desc['InputCount']}) items; "
        f"got {len(desc['InputTensors'])}"
    )


def test_nested_structs_and_tensor_arrays_are_read_member_by_member() -> None:
    spec = CATALOG.operator("UPSAMPLE_2D")
    desc = copy.deepcopy(BASES["UPSAMPLE_2D"])
    assert desc is not None
    desc["ScaleSize"] = {"Width": -1, "Height": 2, "Depth": 1}
    messages = [str(v) for v in validate_operator(operator(spec, desc)).violations]
    assert any("DML_SIZE_2D has no member 'Depth'" in m for m in messages)
    assert any(
        "ScaleSize.Width must be an integer in [0, 4294967295]; got -1" in m for m in messages
    )
    split = CATALOG.operator("SPLIT")
    desc = copy.deepcopy(BASES["SPLIT"])
    assert desc is not None
    desc["OutputTensors"][0]["DataType"] = "FLOAT128"
    (violation,) = validate_operator(operator(split, desc)).violations
    assert violation.path == "/desc/OutputTensors/0/DataType"


def test_support_rows_per_function_apply_by_their_condition() -> None:
    """REDUCE's tables are per function: ARGMAX outputs integers, SUM does not."""
    spec = CATALOG.operator("REDUCE")
    desc = copy.deepcopy(BASES["REDUCE"])
    assert desc is not None
    argmax_rows = [r for r in spec.support if r.when is not None and "ARGMAX" in r.when.source]
    output_types = argmax_rows[-1].tensor("OutputTensor").data_types
    integral = next(t for t in output_types if t.startswith(("INT", "UINT")))
    desc.update(Function="ARGMAX")
    desc["OutputTensor"]["DataType"] = integral
    argmax = validate_operator(operator(spec, desc))
    assert not [v for v in argmax.fired() if v.startswith("SUPPORT.")], argmax.violations
    desc.update(Function="AVERAGE")  # its rows allow floating outputs only
    averaged = validate_operator(operator(spec, desc)).fired()
    assert "SUPPORT.data_type" in averaged


def test_changes_of_the_feature_level_history_gate_by_level() -> None:
    """The history's 6_4 section: PADDING and PADDING1 accept DML_PADDING_MODE_WRAP, and
    ACTIVATION_SOFTPLUS allows Steepness < 1; below 6_4 neither is valid. A Steepness of 0 is
    valid from 6_4 but its result is undefined (the formula divides by it)."""
    for name, rule in (("PADDING", "PADDING.C6"), ("PADDING1", "PADDING1.C6")):
        spec = CATALOG.operator(name)
        desc = dict(copy.deepcopy(BASES[name]) or {}, PaddingMode="WRAP")
        assert validate_operator(operator(spec, desc), "6_4").valid
        below = validate_operator(operator(spec, desc), "6_3")
        assert below.fired() == (rule,)
        assert "PaddingMode WRAP exists from DML_FEATURE_LEVEL_6_4" in below.violations[0].message
    softplus = CATALOG.operator("ACTIVATION_SOFTPLUS")
    for steepness in (0.5, 0.0, -2.0):
        desc = dict(copy.deepcopy(BASES["ACTIVATION_SOFTPLUS"]) or {}, Steepness=steepness)
        assert validate_operator(operator(softplus, desc), "6_4").valid
        assert validate_operator(operator(softplus, desc), "6_3").fired() == (
            "ACTIVATION_SOFTPLUS.C4",
        )
    size = BASES["ACTIVATION_SOFTPLUS"]["InputTensor"]["Sizes"]  # type: ignore[index]
    inputs = {"InputTensor": np.ones(size, np.float32)}
    zero = dict(copy.deepcopy(BASES["ACTIVATION_SOFTPLUS"]) or {}, Steepness=0.0)
    report = check_requires(operator(softplus, zero), inputs, "6_4")
    assert [v.constraint for v in report.violations] == ["ACTIVATION_SOFTPLUS.R1"]
    assert report.undefined["OutputTensor"].all()
