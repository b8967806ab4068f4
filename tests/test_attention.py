"""MULTIHEAD_ATTENTION: the page's steps worked by hand on the reference, the JAX kernel and
onnxruntime's graph (stacked and unstacked forms, heads, biases, past keys and values, each
mask type), size rules that fire naming their ids, the output's bound, broken backends caught
(Scale or the mask forgotten), the ops function, and the generated suite on jax, the NumPy
reference and onnxruntime (slow)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.conformance.cases import Case, draw_case
from dmlspec.conformance.check import CaseFailure, run_case
from dmlspec.conformance.mutate import needed_present
from dmlspec.reference.fields import catalog
from dmlspec.validation import validate_operator

from .attention_backends import ForgottenMask, ForgottenScale
from .test_conformance import conformance

MASK = "DML_MULTIHEAD_ATTENTION_MASK_TYPE_"


def _tensor(sizes: list[int], data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def _attention(tensors: dict[str, list[int]], **fields: Any) -> dict[str, Any]:
    desc: dict[str, Any] = {
        name: _tensor(sizes, "INT32" if name == "MaskTensor" else "FLOAT32")
        for name, sizes in tensors.items()
    }
    desc.update(
        {"Scale": 1.0, "MaskFilterValue": -10000.0, "HeadCount": 1, "MaskType": MASK + "NONE"}
    )
    desc.update(fields)
    return {"type": "DML_OPERATOR_MULTIHEAD_ATTENTION", "desc": desc}


def _both(operator: dict[str, Any], inputs: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """The NumPy reference's, the JAX kernel's and (where installed) onnxruntime's outputs."""
    outputs = [reference.run(operator, inputs), ops.run(operator, inputs)]
    if importlib.util.find_spec("onnxruntime") is not None:
        outputs.append(load_backend("onnxruntime").run(operator, inputs))
    return outputs


# One query, two keys: scores Scale * [1, 0]; with Scale = ln 3 the weights are [3/4, 1/4].
QUERY = np.array([[[1, 0]]], np.float32)
KEYS = np.array([[[1, 0], [0, 1]]], np.float32)
VALUES = np.array([[[1, 2], [3, 4]]], np.float32)
SIZES = {"QueryTensor": [1, 1, 2], "KeyTensor": [1, 2, 2], "ValueTensor": [1, 2, 2]}


def test_softmax_of_scaled_scores_weighs_the_values() -> None:
    operator = _attention({**SIZES, "OutputTensor": [1, 1, 2]}, Scale=math.log(3))
    inputs = {"QueryTensor": QUERY, "KeyTensor": KEYS, "ValueTensor": VALUES}
    for outputs in _both(operator, inputs):
        # 3/4 * [1, 2] + 1/4 * [3, 4]
        np.testing.assert_allclose(outputs["OutputTensor"], [[[1.5, 2.5]]], rtol=1e-6)


@pytest.mark.parametrize(
    ("mask_type", "mask", "expected"),
    [
        # KEY_SEQUENCE_LENGTH {1, batch}: keys from the length on are set to MaskFilterValue
        ("KEY_SEQUENCE_LENGTH", [[1]], [1.0, 2.0]),
        # KEY_SEQUENCE_END_START {2, batch}: end (exclusive) 2, start (inclusive) 1
        ("KEY_SEQUENCE_END_START", [[2], [1]], [3.0, 4.0]),
        # BOOLEAN: MaskFilterValue (-ln 3) added where the mask holds 0: scores [0, 0]
        ("BOOLEAN", [[0, 1]], [2.0, 3.0]),
    ],
)
def test_each_mask_type(mask_type: str, mask: list[list[int]], expected: list[float]) -> None:
    sizes = {**SIZES, "MaskTensor": list(np.shape(mask)), "OutputTensor": [1, 1, 2]}
    filler = -math.log(3) if mask_type == "BOOLEAN" else -10000.0
    operator = _attention(
        sizes, Scale=math.log(3), MaskType=MASK + mask_type, MaskFilterValue=filler
    )
    assert validate_operator(operator).valid
    inputs = {
        "QueryTensor": QUERY,
        "KeyTensor": KEYS,
        "ValueTensor": VALUES,
        "MaskTensor": np.array(mask, np.int32),
    }
    for outputs in _both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputTensor"], [[expected]], rtol=1e-6, atol=1e-6)


def test_heads_biases_past_and_present_by_hand() -> None:
    # Two heads of size 1; one query, one new key and value after one past key and value.
    operator = _attention(
        {
            "QueryTensor": [1, 1, 2],
            "KeyTensor": [1, 1, 2],
            "ValueTensor": [1, 1, 2],
            "BiasTensor": [6],
            "PastKeyTensor": [1, 2, 1, 1],
            "PastValueTensor": [1, 2, 1, 1],
            "OutputTensor": [1, 1, 2],
            "OutputPresentKeyTensor": [1, 2, 2, 1],
            "OutputPresentValueTensor": [1, 2, 2, 1],
        },
        HeadCount=2,
        Scale=math.log(3),
    )
    inputs = {
        "QueryTensor": np.array([[[0, 1]]], np.float32),  # + bias [1, 0]: q = [1, 1]
        "KeyTensor": np.array([[[0, 0]]], np.float32),  # + bias [0, 1]: k = [0, 1]
        "ValueTensor": np.array([[[5, 6]]], np.float32),  # + bias [2, -2]: v = [7, 4]
        "BiasTensor": np.array([1, 0, 0, 1, 2, -2], np.float32),
        "PastKeyTensor": np.array([1, 0], np.float32).reshape(1, 2, 1, 1),
        "PastValueTensor": np.array([1, 8], np.float32).reshape(1, 2, 1, 1),
    }
    # head 0: keys [1, 0] -> weights [3/4, 1/4] over values [1, 7]: 2.5
    # head 1: keys [0, 1] -> weights [1/4, 3/4] over values [8, 4]: 5
    for outputs in _both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputTensor"], [[[2.5, 5.0]]], rtol=1e-6)
        np.testing.assert_array_equal(
            outputs["OutputPresentKeyTensor"].reshape(2, 2), [[1, 0], [0, 1]]
        )
        np.testing.assert_array_equal(
            outputs["OutputPresentValueTensor"].reshape(2, 2), [[1, 7], [8, 4]]
        )


@pytest.mark.parametrize(
    "stacked",
    [
        {"StackedQueryKeyValueTensor": [1, 2, 2, 3, 2]},
        {"StackedQueryKeyTensor": [1, 2, 2, 2, 2], "ValueTensor": [1, 2, 4]},
        {"QueryTensor": [1, 2, 4], "StackedKeyValueTensor": [1, 2, 2, 2, 2]},
    ],
)
def test_stacked_forms_read_as_the_unstacked_tensors(stacked: dict[str, list[int]]) -> None:
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 2, 2, 2)).astype(np.float32) for _ in range(3))
    plain = _attention(
        {
            "QueryTensor": [1, 2, 4],
            "KeyTensor": [1, 2, 4],
            "ValueTensor": [1, 2, 4],
            "OutputTensor": [1, 2, 4],
        },
        HeadCount=2,
        Scale=0.7,
    )
    plain_inputs = {
        "QueryTensor": q.reshape(1, 2, 4),
        "KeyTensor": k.reshape(1, 2, 4),
        "ValueTensor": v.reshape(1, 2, 4),
    }
    expected = reference.run(plain, plain_inputs)["OutputTensor"]
    parts = {"Query": q, "Key": k, "Value": v}
    inputs = {}
    for name, sizes in stacked.items():
        roles = [r for r in ("Query", "Key", "Value") if r in name.removesuffix("Tensor")]
        if name.startswith("Stacked"):  # {batch, length, heads, roles, size}
            inputs[name] = np.stack([parts[r] for r in roles], axis=3)
        else:
            inputs[name] = parts[roles[0]].reshape(sizes)
    operator = _attention({**stacked, "OutputTensor": [1, 2, 4]}, HeadCount=2, Scale=0.7)
    assert validate_operator(operator).valid
    for outputs in _both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputTensor"], expected, rtol=1e-5, atol=1e-6)


VALID = {
    "QueryTensor": [2, 3, 8],
    "KeyTensor": [2, 5, 8],
    "ValueTensor": [2, 5, 6],
    "BiasTensor": [22],
    "PastKeyTensor": [2, 2, 4, 4],
    "PastValueTensor": [2, 2, 4, 3],
    "RelativePositionBiasTensor": [1, 2, 3, 9],
    "MaskTensor": [2, 1, 1, 9],
    "OutputTensor": [2, 3, 6],
    "OutputPresentKeyTensor": [2, 2, 9, 4],
    "OutputPresentValueTensor": [2, 2, 9, 3],
}


@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("C2", {"StackedQueryKeyValueTensor": [2, 3, 2, 3, 4]}),  # a second query
        ("C6", {"OutputTensor": [2, 3, 7]}),  # valueHiddenSize not a multiple of HeadCount
        ("C10", {"KeyTensor": [2, 5, 6]}),  # the key's hiddenSize is not the query's
        ("C12", {"ValueTensor": [2, 4, 6]}),  # keyValueSequenceLength is not the key's
        ("C15", {"BiasTensor": [24]}),  # not hidden + hidden + valueHidden
        ("C16", {"PastValueTensor": None}),  # a past key without a past value
        ("C17", {"PastKeyTensor": [2, 2, 4, 3]}),  # headSize is 4
        ("C18", {"PastValueTensor": [2, 2, 3, 3]}),  # pastSequenceLength is PastKey's 4
        ("C19", {"OutputPresentKeyTensor": [2, 2, 5, 4]}),  # past + keyValue = 9
        ("C20", {"OutputPresentValueTensor": [2, 2, 9, 4]}),  # valueHeadSize is 3
        ("C21", {"RelativePositionBiasTensor": [1, 2, 3, 5]}),
        ("C23", {"MaskTensor": [2, 1, 3, 5]}),
    ],
)
def test_wrong_sizes_are_rejected_naming_the_rule(
    rule: str, change: dict[str, list[int] | None]
) -> None:
    tensors = {k: v for k, v in {**VALID, **change}.items() if v is not None}
    operator = _attention(tensors, HeadCount=2, MaskType=MASK + "BOOLEAN")
    assert validate_operator(_attention(VALID, HeadCount=2, MaskType=MASK + "BOOLEAN")).valid
    result = validate_operator(operator)
    assert f"MULTIHEAD_ATTENTION.{rule}" in result.fired(), result.violations


@pytest.mark.parametrize(
    ("rule", "tensors"),
    [
        # stacked query, key and value on the fourth dimension: 3 of them
        ("C9", {"StackedQueryKeyValueTensor": [2, 3, 2, 2, 4], "OutputTensor": [2, 3, 8]}),
        # valueHiddenSize = headCount * the stacked headSize (2 * 4)
        (
            "C13",
            {
                "QueryTensor": [2, 3, 8],
                "StackedKeyValueTensor": [2, 5, 2, 2, 4],
                "OutputTensor": [2, 3, 6],
            },
        ),
        ("C14", {"StackedQueryKeyValueTensor": [2, 3, 2, 3, 4], "OutputTensor": [2, 3, 6]}),
    ],
)
def test_stacked_sizes_are_rejected_naming_the_rule(
    rule: str, tensors: dict[str, list[int]]
) -> None:
    result = validate_operator(_attention(tensors, HeadCount=2))
    assert result.fired() == (f"MULTIHEAD_ATTENTION.{rule}",), result.violations


@pytest.mark.parametrize(
    ("mask_type", "sizes", "rule"),
    [
        ("KEY_SEQUENCE_LENGTH", [2, 1], "C24"),
        ("KEY_SEQUENCE_END_START", [1, 2], "C25"),
        ("KEY_QUERY_SEQUENCE_LENGTH_START_END", [6], "C26"),
        ("NONE", [1, 2], "C22"),
    ],
)
def test_mask_shapes_follow_the_mask_type(mask_type: str, sizes: list[int], rule: str) -> None:
    operator = _attention({**VALID, "MaskTensor": sizes}, HeadCount=2, MaskType=MASK + mask_type)
    assert f"MULTIHEAD_ATTENTION.{rule}" in validate_operator(operator).fired()


def test_drawn_descs_are_valid_in_every_form() -> None:
    spec = catalog().operator("MULTIHEAD_ATTENTION")
    forms = set()
    for seed in range(12):
        case = draw_case(catalog(), spec, "6_1", seed, attempts=3)  # solved, not rejected
        desc = case.operator["desc"]
        forms.add(
            tuple(
                sorted(
                    n
                    for n in desc
                    if "Query" in n or "Key" in n or "Value" in n
                    if not n.startswith(("Output", "Past"))
                )
            )
        )
    assert len(forms) == 4, forms  # Q/K/V, StackedQK/V, Q/StackedKV, StackedQKV


def _case(backend: Any) -> None:
    """A BOOLEAN-masked case with Scale 0.5, judged as the suite judges it."""
    rng = np.random.default_rng(3)
    sizes = {**VALID, "MaskTensor": [2, 1, 1, 9]}
    operator = _attention(sizes, HeadCount=2, Scale=0.5, MaskType=MASK + "BOOLEAN")
    inputs = {
        name: (
            rng.integers(0, 2, s).astype(np.int32)
            if name == "MaskTensor"
            else rng.standard_normal(s).astype(np.float32)
        )
        for name, s in sizes.items()
        if not name.startswith("Output")
    }
    spec = catalog().operator("MULTIHEAD_ATTENTION")
    run_case(catalog(), spec, backend, Case(operator, inputs, "6_1", 0))


def test_the_reference_passes_its_own_judgement_and_broken_backends_fail() -> None:
    from dmlspec.backends import NumpyBackend

    _case(NumpyBackend())
    for broken in (ForgottenScale(), ForgottenMask()):
        with pytest.raises(CaseFailure, match="elements beyond KS"):
            _case(broken)


def test_the_bound_covers_a_flushed_weight_and_stays_tight() -> None:
    # A weight of exp(-94) (a subnormal FLOAT32) meeting a value of 3.4e38 (found by the
    # suite): flushing it to 0 moves the output by 3e-3, which the bound allows, and the
    # allowance stays of that order (not tiny * 3.4e38 = 4).
    operator = _attention(
        {
            "QueryTensor": [1, 1, 1],
            "KeyTensor": [1, 2, 1],
            "ValueTensor": [1, 2, 1],
            "OutputTensor": [1, 1, 1],
        },
    )
    inputs = {
        "QueryTensor": np.array([[[1]]], np.float32),
        "KeyTensor": np.array([[[-94], [0]]], np.float32),
        "ValueTensor": np.array([[[3.4e38], [1]]], np.float32),
    }
    value, bound, _ = reference.run_exact(operator, inputs)["OutputTensor"]
    terms = 2 * 2 + 10
    assert terms * 2.0**-24 * bound.item() > abs(value.item() - 1.0)
    assert terms * 2.0**-24 * bound.item() < 1e-2


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_attention_suite_passes(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "MULTIHEAD_ATTENTION", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["ForgottenScale", "ForgottenMask"])
def test_broken_attention_is_caught(backend: str, tmp_path: Path) -> None:
    run = conformance(
        f"tests.attention_backends:{backend}",
        tmp_path,
        "--ops",
        "MULTIHEAD_ATTENTION",
        "--workers",
        "0",
    )
    assert run.returncode == 1, run.stdout[-3000:]
    junit = (tmp_path / "junit.xml").read_text()
    assert "elements beyond KS * max(bound * u, tiny) of the FLOAT64 reference" in junit


def test_the_ops_function_leaves_out_the_present_outputs_not_asked_for() -> None:
    output, present_key, present_value = ops.multihead_attention(
        QueryTensor=QUERY,
        KeyTensor=KEYS,
        ValueTensor=VALUES,
        OutputTensor=_tensor([1, 1, 2]),
        OutputPresentKeyTensor=None,
        OutputPresentValueTensor=_tensor([1, 1, 2, 2]),
        Scale=math.log(3),
        MaskFilterValue=-10000.0,
        HeadCount=1,
        MaskType="NONE",
    )
    np.testing.assert_allclose(np.asarray(output), [[[1.5, 2.5]]], rtol=1e-6)
    assert present_key is None
    np.testing.assert_array_equal(np.asarray(present_value), VALUES.reshape(1, 1, 2, 2))


def test_breaking_a_rule_of_one_stacked_form_needs_that_form_given() -> None:
    """The negative tests' search skips bases without the tensor such a rule asks about (no
    single change adds one); a rule without that guard needs nothing given."""
    spec = catalog().operator("MULTIHEAD_ATTENTION")
    assert needed_present(spec, "MULTIHEAD_ATTENTION.C13") == ("StackedKeyValueTensor",)
    assert needed_present(spec, "MULTIHEAD_ATTENTION.C6") == ()
