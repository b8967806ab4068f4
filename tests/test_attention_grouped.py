"""MULTIHEAD_ATTENTION1 as grouped-query attention: shared key and value heads worked by hand on
the reference, the JAX kernel and onnxruntime's graph (and onnxruntime's GroupQueryAttention
where it applies), equal counts read as MULTIHEAD_ATTENTION,
the size rules the two counts change firing by id, PastSequenceLengthsTensor leaving the outputs
undefined, backends misreading which key and value head a query head shares caught, the ops
function, and the generated suite on jax, the NumPy reference and onnxruntime (slow)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import NumpyBackend
from dmlspec.conformance.cases import Case, draw_case
from dmlspec.conformance.check import CaseFailure, run_case
from dmlspec.conformance.solved import undefining_inputs
from dmlspec.reference.fields import catalog
from dmlspec.validation import check_requires, validate_operator

from .attention_backends import GroupSizeMisread, TiledKeyValueHeads
from .test_attention import MASK, _attention, _both
from .test_conformance import conformance

OPERATOR = "DML_OPERATOR_MULTIHEAD_ATTENTION1"


def _grouped(tensors: dict[str, list[int]], query_heads: int, shared: int, **fields: Any) -> Any:
    """A MULTIHEAD_ATTENTION1 operator: MULTIHEAD_ATTENTION's desc with the two head counts."""
    operator = _attention(tensors, **fields)
    desc = {k: v for k, v in operator["desc"].items() if k != "HeadCount"}
    desc.update(QueryHeadCount=query_heads, KeyValueHeadCount=shared)
    return {"type": OPERATOR, "desc": desc}


def test_two_query_heads_share_one_key_and_value_head() -> None:
    # Query heads [1, 0] and [0, 1] (size 2) attend to the same two keys [1, 0] and [0, 1]:
    # with Scale = ln 3 head 0 weighs the values [3/4, 1/4], head 1 [1/4, 3/4].
    operator = _grouped(
        {
            "QueryTensor": [1, 1, 4],
            "KeyTensor": [1, 2, 2],
            "ValueTensor": [1, 2, 1],
            "OutputTensor": [1, 1, 2],
        },
        2,
        1,
        Scale=math.log(3),
    )
    assert validate_operator(operator).valid
    inputs = {
        "QueryTensor": np.array([[[1, 0, 0, 1]]], np.float32),
        "KeyTensor": np.array([[[1, 0], [0, 1]]], np.float32),
        "ValueTensor": np.array([[[4], [8]]], np.float32),
    }
    for outputs in _both(operator, inputs):
        # 3/4 * 4 + 1/4 * 8 = 5; 1/4 * 4 + 3/4 * 8 = 7
        np.testing.assert_allclose(outputs["OutputTensor"], [[[5.0, 7.0]]], rtol=1e-6)


def _repeated(data: np.ndarray, shared: int, group: int) -> np.ndarray:
    """{.., shared * size} with each head repeated `group` times in place."""
    split = data.reshape(*data.shape[:-1], shared, data.shape[-1] // shared)
    return np.repeat(split, group, axis=-2).reshape(*data.shape[:-1], -1)


GROUPED = {
    "QueryTensor": [2, 3, 12],  # 4 query heads of 3
    "KeyTensor": [2, 5, 6],  # 2 key and value heads
    "ValueTensor": [2, 5, 4],  # value heads of 2
    "BiasTensor": [22],  # 12 + 6 + 4
    "PastKeyTensor": [2, 2, 4, 3],
    "PastValueTensor": [2, 2, 4, 2],
    "RelativePositionBiasTensor": [1, 4, 3, 9],
    "MaskTensor": [2, 1, 1, 9],
    "OutputTensor": [2, 3, 8],
    "OutputPresentKeyTensor": [2, 2, 9, 3],
    "OutputPresentValueTensor": [2, 2, 9, 2],
}


EQUAL = {
    **GROUPED,
    "KeyTensor": [2, 5, 12],
    "ValueTensor": [2, 5, 8],
    "BiasTensor": [32],
    "PastKeyTensor": [2, 4, 4, 3],
    "PastValueTensor": [2, 4, 4, 2],
    "OutputPresentKeyTensor": [2, 4, 9, 3],
    "OutputPresentValueTensor": [2, 4, 9, 2],
}


def _inputs(sizes: dict[str, list[int]], seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        name: (
            rng.integers(0, 2, s).astype(np.int32)
            if name == "MaskTensor"
            else rng.standard_normal(s).astype(np.float32)
        )
        for name, s in sizes.items()
        if not name.startswith("Output")
    }


def test_shared_heads_are_multihead_attention_with_each_key_and_value_head_repeated() -> None:
    """Query heads 0 and 1 use key and value head 0, heads 2 and 3 head 1: MULTIHEAD_ATTENTION
    with 4 heads on the key, value, past and bias repeated head by head gives the same output;
    the present key and value keep their 2 heads."""
    operator = _grouped(GROUPED, 4, 2, Scale=0.5, MaskType=MASK + "BOOLEAN")
    assert validate_operator(operator).valid
    inputs = _inputs(GROUPED)
    bias = inputs["BiasTensor"]
    expanded = {
        **inputs,
        "KeyTensor": _repeated(inputs["KeyTensor"], 2, 2),
        "ValueTensor": _repeated(inputs["ValueTensor"], 2, 2),
        "BiasTensor": np.concatenate(
            [bias[:12], _repeated(bias[12:18], 2, 2), _repeated(bias[18:], 2, 2)]
        ),
        "PastKeyTensor": np.repeat(inputs["PastKeyTensor"], 2, axis=1),
        "PastValueTensor": np.repeat(inputs["PastValueTensor"], 2, axis=1),
    }
    sizes = {k: list(np.shape(v)) for k, v in expanded.items()}
    plain = _attention(
        {**sizes, "OutputTensor": [2, 3, 8]}, HeadCount=4, Scale=0.5, MaskType=MASK + "BOOLEAN"
    )
    expected = reference.run(plain, expanded)["OutputTensor"]
    for outputs in _both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputTensor"], expected, rtol=2e-5, atol=2e-6)
        biased_key = (inputs["KeyTensor"] + bias[12:18]).reshape(2, 5, 2, 3)
        key = np.concatenate([inputs["PastKeyTensor"], np.swapaxes(biased_key, 1, 2)], axis=2)
        np.testing.assert_allclose(outputs["OutputPresentKeyTensor"], key, rtol=1e-6)


def test_onnxruntime_group_query_attention_shares_the_heads_the_same_way() -> None:
    """com.microsoft GroupQueryAttention (causal=0; onnxruntime's CPU kernel takes head sizes
    that are multiples of 8 and, without a past, a key as long as the query) agrees with the
    reference on a desc within those limits: the grouping decided in C27, from a second
    implementation."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    sizes = {"QueryTensor": [2, 5, 32], "KeyTensor": [2, 5, 16], "ValueTensor": [2, 5, 16]}
    operator = _grouped({**sizes, "OutputTensor": [2, 5, 32]}, 4, 2, Scale=0.3)
    assert validate_operator(operator).valid
    inputs = _inputs(sizes)
    names = {"QueryTensor": "q", "KeyTensor": "k", "ValueTensor": "v"}
    feeds: dict[str, np.ndarray] = {names[k]: v for k, v in inputs.items()}
    feeds.update(seqlens_k=np.full(2, 4, np.int32), total=np.array(5, np.int32))
    node = helper.make_node(
        "GroupQueryAttention",
        ["q", "k", "v", "", "", "seqlens_k", "total"],
        ["out"],
        domain="com.microsoft",
        num_heads=4,
        kv_num_heads=2,
        causal=0,
        scale=0.3,
    )
    graph = helper.make_graph(
        [node],
        "gqa",
        [
            helper.make_tensor_value_info(
                name,
                TensorProto.INT32 if name in ("seqlens_k", "total") else TensorProto.FLOAT,
                list(value.shape),
            )
            for name, value in feeds.items()
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (output,) = session.run(None, feeds)
    expected = reference.run(operator, inputs)["OutputTensor"]
    np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-6)


def test_equal_counts_are_multihead_attention() -> None:
    inputs = _inputs(EQUAL)
    fields = {"Scale": 0.5, "MaskType": MASK + "BOOLEAN"}
    expected = reference.run(_attention(EQUAL, HeadCount=4, **fields), inputs)
    for outputs in _both(_grouped(EQUAL, 4, 4, **fields), inputs):
        for name, value in expected.items():
            np.testing.assert_allclose(outputs[name], value, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("C10", {"KeyTensor": [2, 5, 12]}),  # QueryHeadCount * headSize: not the key's heads
        ("C12", {"ValueTensor": [2, 5, 8]}),  # QueryHeadCount * valueHeadSize
        ("C15", {"BiasTensor": [32]}),  # hidden + hidden + valueHidden, the query's sizes
        ("C17", {"PastKeyTensor": [2, 4, 4, 3]}),  # QueryHeadCount heads
        ("C18", {"PastValueTensor": [2, 4, 4, 2]}),
        ("C19", {"OutputPresentKeyTensor": [2, 4, 9, 3]}),
        ("C20", {"OutputPresentValueTensor": [2, 4, 9, 2]}),
        ("C21", {"RelativePositionBiasTensor": [1, 2, 3, 9]}),  # the key and value heads
        ("C23", {"MaskTensor": [2, 2, 1, 9]}),
        ("C29", {"PastSequenceLengthsTensor": [3]}),  # not batchSize
    ],
)
def test_sizes_follow_each_head_count_naming_the_rule(
    rule: str, change: dict[str, list[int]]
) -> None:
    fields = {"MaskType": MASK + "BOOLEAN"}
    assert validate_operator(_grouped(GROUPED, 4, 2, **fields)).valid
    result = validate_operator(_grouped({**GROUPED, **change}, 4, 2, **fields))
    assert f"MULTIHEAD_ATTENTION1.{rule}" in result.fired(), result.violations


@pytest.mark.parametrize(
    ("rule", "tensors", "counts"),
    [
        # 6 query heads cannot share 4 key and value heads
        (
            "C27",
            {"QueryTensor": [1, 2, 6], "KeyTensor": [1, 2, 4], "ValueTensor": [1, 2, 4]},
            (6, 4),
        ),
        # a stacked query and key have one heads dimension
        ("C28", {"StackedQueryKeyTensor": [1, 2, 4, 2, 3], "ValueTensor": [1, 2, 4]}, (4, 2)),
        # the stacked key and value have the key and value heads, not the query's
        ("C11", {"QueryTensor": [2, 3, 8], "StackedKeyValueTensor": [2, 5, 4, 2, 2]}, (4, 2)),
        # stacked on the fourth dimension: 3 of them
        ("C9", {"StackedQueryKeyValueTensor": [2, 3, 2, 2, 4]}, (2, 2)),
    ],
)
def test_grouping_and_stacking_rules_fire_alone(
    rule: str, tensors: dict[str, list[int]], counts: tuple[int, int]
) -> None:
    query = next(v for k, v in tensors.items() if "Query" in k)
    size = query[-1] // counts[0] if len(query) == 3 else query[-1]
    value = tensors.get("ValueTensor", [0, 0, counts[1] * size])
    output = [*query[:2], counts[0] * value[-1] // counts[1]]
    result = validate_operator(_grouped({**tensors, "OutputTensor": output}, *counts))
    assert result.fired() == (f"MULTIHEAD_ATTENTION1.{rule}",), result.violations


@pytest.mark.parametrize(
    ("rule", "tensors", "output"),
    [
        # valueHiddenSize = QueryHeadCount * the stacked headSize (4 * 2)
        ("C13", {"QueryTensor": [2, 3, 8], "StackedKeyValueTensor": [2, 5, 2, 2, 2]}, [2, 3, 12]),
        ("C14", {"StackedQueryKeyValueTensor": [2, 3, 2, 3, 4]}, [2, 3, 6]),
    ],
)
def test_the_stacked_value_head_size_is_the_key_head_size(
    rule: str, tensors: dict[str, list[int]], output: list[int]
) -> None:
    counts = (4, 2) if rule == "C13" else (2, 2)
    result = validate_operator(_grouped({**tensors, "OutputTensor": output}, *counts))
    assert result.fired() == (f"MULTIHEAD_ATTENTION1.{rule}",), result.violations


def test_a_stacked_key_and_value_has_the_key_and_value_heads() -> None:
    tensors = {"QueryTensor": [1, 2, 12], "StackedKeyValueTensor": [1, 3, 2, 2, 3]}
    operator = _grouped({**tensors, "OutputTensor": [1, 2, 12]}, 4, 2, Scale=0.3)
    assert validate_operator(operator).valid
    inputs = _inputs(tensors)
    stacked = inputs["StackedKeyValueTensor"]
    unstacked = {
        "QueryTensor": inputs["QueryTensor"],
        "KeyTensor": stacked[:, :, :, 0].reshape(1, 3, 6),
        "ValueTensor": stacked[:, :, :, 1].reshape(1, 3, 6),
    }
    sizes = {k: list(v.shape) for k, v in unstacked.items()}
    plain = _grouped({**sizes, "OutputTensor": [1, 2, 12]}, 4, 2, Scale=0.3)
    expected = reference.run(plain, unstacked)["OutputTensor"]
    for outputs in _both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputTensor"], expected, rtol=1e-5, atol=1e-6)


def test_past_sequence_lengths_leave_every_output_undefined() -> None:
    sizes = {**GROUPED, "PastSequenceLengthsTensor": [2]}
    operator = _grouped(sizes, 4, 2, MaskType=MASK + "BOOLEAN")
    assert validate_operator(operator).valid
    report = check_requires(operator, _inputs(sizes))
    assert {v.constraint for v in report.violations} == {
        "MULTIHEAD_ATTENTION1.R2",
        "MULTIHEAD_ATTENTION1.R3",
        "MULTIHEAD_ATTENTION1.R4",
    }
    assert all(mask.all() for mask in report.undefined.values())
    assert set(report.undefined) == {n for n in sizes if n.startswith("Output")}


class _Garbage(NumpyBackend):
    """Any outputs at all: NaN everywhere."""

    def run(self, operator: Any, inputs: Any) -> dict[str, Any]:
        return {k: np.full_like(v, np.nan) for k, v in reference.run(operator, inputs).items()}


def _case(backend: Any, sizes: dict[str, list[int]], counts: tuple[int, int] = (4, 2)) -> None:
    operator = _grouped(sizes, *counts, Scale=0.5, MaskType=MASK + "BOOLEAN")
    spec = catalog().operator("MULTIHEAD_ATTENTION1")
    run_case(catalog(), spec, backend, Case(operator, _inputs(sizes), "6_3", 0))


def test_any_output_passes_with_past_sequence_lengths_and_none_without() -> None:
    _case(_Garbage(), {**GROUPED, "PastSequenceLengthsTensor": [2]})
    with pytest.raises(CaseFailure):
        _case(_Garbage(), GROUPED)


@pytest.mark.parametrize(
    ("backend", "sizes", "counts"),
    [
        # 4 query heads on 2 shared ones: tiled reads [0, 1, 0, 1], not [0, 0, 1, 1]
        (TiledKeyValueHeads(), GROUPED, (4, 2)),
        # equal counts: h // 4 reads head 0 for every query head
        (GroupSizeMisread(), EQUAL, (4, 4)),
    ],
)
def test_the_reference_passes_and_misread_shared_heads_fail(
    backend: Any, sizes: dict[str, list[int]], counts: tuple[int, int]
) -> None:
    _case(NumpyBackend(), sizes, counts)
    with pytest.raises(CaseFailure, match="elements beyond KS"):
        _case(backend, sizes, counts)


def test_drawn_descs_share_heads_and_stack_only_as_the_rules_allow() -> None:
    spec = catalog().operator("MULTIHEAD_ATTENTION1")
    grouped = False
    # PastSequenceLengthsTensor only leaves the outputs undefined: given only where forced
    assert undefining_inputs(spec) == {"PastSequenceLengthsTensor"}
    assert not undefining_inputs(catalog().operator("MULTIHEAD_ATTENTION"))
    for seed in range(10):
        desc = draw_case(catalog(), spec, "6_3", seed, attempts=3).operator["desc"]
        assert validate_operator({"type": OPERATOR, "desc": desc}, "6_3").valid
        assert "PastSequenceLengthsTensor" not in desc
        counts = desc["QueryHeadCount"], desc["KeyValueHeadCount"]
        assert counts[0] % counts[1] == 0
        if any(n in desc for n in ("StackedQueryKeyTensor", "StackedQueryKeyValueTensor")):
            assert counts[0] == counts[1]
        grouped |= counts[0] != counts[1]
    assert grouped


def test_the_ops_function() -> None:
    output, present_key, present_value = ops.multihead_attention1(
        QueryTensor=np.array([[[1, 0, 0, 1]]], np.float32),
        KeyTensor=np.array([[[1, 0], [0, 1]]], np.float32),
        ValueTensor=np.array([[[4], [8]]], np.float32),
        OutputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 2]},
        OutputPresentKeyTensor=None,
        OutputPresentValueTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 2, 1]},
        Scale=math.log(3),
        MaskFilterValue=-10000.0,
        QueryHeadCount=2,
        KeyValueHeadCount=1,
        MaskType="NONE",
    )
    np.testing.assert_allclose(np.asarray(output), [[[5.0, 7.0]]], rtol=1e-6)
    assert present_key is None
    np.testing.assert_array_equal(np.asarray(present_value).reshape(-1), [4, 8])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_grouped_attention_suite_passes(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "MULTIHEAD_ATTENTION1", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20


@pytest.mark.slow
def test_a_misread_group_size_is_caught(tmp_path: Path) -> None:
    run = conformance(
        "tests.attention_backends:GroupSizeMisread",
        tmp_path,
        "--ops",
        "MULTIHEAD_ATTENTION1",
        "--workers",
        "0",
    )
    assert run.returncode == 1, run.stdout[-3000:]
    junit = (tmp_path / "junit.xml").read_text()
    assert "elements beyond KS * max(bound * u, tiny) of the FLOAT64 reference" in junit
