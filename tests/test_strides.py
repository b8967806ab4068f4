"""Strided tensors (ARCHITECTURE.md, "Strided tensors"): the rules the validators add, the
GATHER_ND example of issue 12 through every path (ops.run, the reference, dispatch,
run-vectors), strided outputs whose gaps survive, and the kernels' one trace per layout."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

from dmlspec import InvalidOperator, ops, reference
from dmlspec.backends import load_backend
from dmlspec.expr.functions import FUNCTIONS
from dmlspec.interop.dispatch import DispatchError, run_model
from dmlspec.interop.run_vectors import run_vectors
from dmlspec.kernels.runtime import trace_count
from dmlspec.validation import validate_operator

# Issue 12: InputTensor's buffer [0, 1, 2, 3] read with Strides [4, 4, 1, 2] is the 2x2
# [[0, 2], [1, 3]] (a transposed 2x2 in a 4-D tensor); gathering rows 1 and 0 of it gives
# [[1, 3], [0, 2]]. Ignoring the strides would give the rows of [[0, 1], [2, 3]].
GATHER = {
    "type": "DML_OPERATOR_GATHER_ND",
    "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2], "Strides": [4, 4, 1, 2]},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 2, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "InputDimensionCount": 2,
        "IndicesDimensionCount": 2,
    },
}
INPUTS = {
    "InputTensor": np.array([0, 1, 2, 3], np.float32),
    "IndicesTensor": np.array([1, 0], np.uint32).reshape(1, 1, 2, 1),
}
TRANSPOSED = np.array([[[[1, 3], [0, 2]]]], np.float32)
SENTINEL = np.float32(-7.5)


def strided_output() -> tuple[dict[str, Any], dict[str, np.ndarray], np.ndarray]:
    """The example with a strided output (rows 4 apart, columns transposed: a 2x2 in an
    8-element buffer); the expected buffer keeps the sentinel outside the view."""
    operator = copy.deepcopy(GATHER)
    operator["desc"]["OutputTensor"].update(Strides=[8, 8, 1, 4], TotalTensorSizeInBytes=32)
    initial = np.full(8, SENTINEL, np.float32)
    expected = initial.copy()
    expected[[0, 4, 1, 5]] = [1, 3, 0, 2]  # out[0,0] at 0, out[0,1] at 4, out[1,0] at 1, ...
    return operator, {**INPUTS, "OutputTensor": initial}, expected


@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_gather_nd_example_gives_the_transposed_answer(backend: str) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    outputs = load_backend(backend).run(GATHER, INPUTS)
    np.testing.assert_array_equal(outputs["OutputTensor"], TRANSPOSED)


def test_ops_run_and_the_reference_agree_on_the_example() -> None:
    np.testing.assert_array_equal(ops.run(GATHER, INPUTS)["OutputTensor"], TRANSPOSED)
    np.testing.assert_array_equal(reference.run(GATHER, INPUTS)["OutputTensor"], TRANSPOSED)


@pytest.mark.parametrize("run", [ops.run, reference.run], ids=["ops", "reference"])
def test_a_strided_output_is_returned_whole_with_its_gaps_untouched(run: Any) -> None:
    operator, inputs, expected = strided_output()
    given = inputs["OutputTensor"].copy()
    result = run(operator, inputs)["OutputTensor"]
    assert result.shape == (8,)
    assert result.tobytes() == expected.tobytes()
    assert inputs["OutputTensor"].tobytes() == given.tobytes()  # the caller's buffer is intact


def test_a_strided_output_call_compiles_the_kernel_alone_and_keeps_a_jax_buffer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The initial buffer is copied by a transfer, not by a copy program compiled per shape,
    and a JAX array given as the buffer survives the call (the copy is donated, not it)."""
    operator, inputs, _ = strided_output()
    operator["desc"]["OutputTensor"].update(Strides=[9, 9, 1, 5], TotalTensorSizeInBytes=40)
    given = jax.numpy.full(10, SENTINEL, jax.numpy.float32)
    with caplog.at_level(logging.WARNING), jax.log_compiles():
        result = ops.run(operator, {**inputs, "OutputTensor": given})["OutputTensor"]
    compiled = [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
    assert len(compiled) == 1, compiled  # the kernel's one program
    assert np.asarray(given).tolist() == [SENTINEL] * 10
    assert np.asarray(result)[[0, 5, 1, 6]].tolist() == [1, 3, 0, 2]


def test_zero_strides_broadcast_an_input() -> None:
    operator = copy.deepcopy(GATHER)
    operator["desc"]["InputTensor"]["Strides"] = [0, 0, 0, 1]  # both rows are [0, 1]
    inputs = {**INPUTS, "InputTensor": np.array([5, 6], np.float32)}
    for run in (ops.run, reference.run):
        result = run(operator, inputs)["OutputTensor"]
        np.testing.assert_array_equal(result, [[[[5, 6], [5, 6]]]])


def test_one_trace_per_layout_and_none_for_a_repeated_call() -> None:
    operator = copy.deepcopy(GATHER)
    operator["desc"]["InputTensor"]["Strides"] = [8, 8, 1, 3]  # a layout of its own
    inputs = {**INPUTS, "InputTensor": np.arange(5, dtype=np.float32)}
    before = trace_count()
    first = ops.run(operator, inputs)["OutputTensor"]
    assert trace_count() == before + 1
    for offset in range(3):
        again = ops.run(operator, {**inputs, "InputTensor": inputs["InputTensor"] + offset})
        np.testing.assert_array_equal(again["OutputTensor"], first + offset)
    assert trace_count() == before + 1
    np.testing.assert_array_equal(first, [[[[1, 4], [0, 3]]]])


def test_a_buffer_of_the_wrong_length_is_rejected_with_what_the_desc_implies() -> None:
    with pytest.raises(InvalidOperator, match=r"InputTensor must have its buffer's shape .*\[4\]"):
        ops.run(GATHER, {**INPUTS, "InputTensor": np.zeros((2, 2), np.float32)})
    operator, inputs, _ = strided_output()
    del inputs["OutputTensor"]
    with pytest.raises(InvalidOperator, match=r"OutputTensor has Strides.*; got \["):
        ops.run(operator, inputs)


@pytest.mark.parametrize(
    ("sizes", "strides", "distinct"),
    [
        ([2, 3], [3, 1], True),  # packed
        ([2, 3], [5, 1], True),  # padded rows
        ([2, 3], [1, 2], True),  # transposed
        ([1, 1, 2, 2], [4, 4, 1, 2], True),  # the example
        ([3, 2], [2, 3], True),  # interleaved, not nested: offsets 0 3 2 5 4 7
        ([2, 3], [0, 1], False),  # broadcast rows
        ([2, 2], [1, 1], False),  # offsets 0 1 1 2
        ([1, 4], [0, 1], True),  # a zero stride on a size-1 dimension moves nothing
    ],
)
def test_distinct_offsets(sizes: list[int], strides: list[int], distinct: bool) -> None:
    assert FUNCTIONS["distinct_offsets"].impl(None, sizes, strides) is distinct


def _fired(operator: dict[str, Any]) -> list[str]:
    return list(validate_operator(operator).fired())


def test_overlapping_output_elements_are_rejected_inputs_may_broadcast() -> None:
    operator = copy.deepcopy(GATHER)
    operator["desc"]["InputTensor"]["Strides"] = [0, 0, 0, 1]
    assert _fired(operator) == []
    operator["desc"]["OutputTensor"]["Strides"] = [0, 0, 0, 1]
    assert _fired(operator) == ["TENSOR.C10"]
    result = validate_operator(operator)
    assert "OutputTensor" in str(result.violations[0])
    with pytest.raises(InvalidOperator, match=r"TENSOR\.C10"):
        ops.run(operator, {**INPUTS, "OutputTensor": np.zeros(2, np.float32)})


def test_a_buffer_smaller_than_the_strides_reach_is_rejected() -> None:
    operator = copy.deepcopy(GATHER)
    operator["desc"]["InputTensor"]["TotalTensorSizeInBytes"] = 12  # the view reaches 16
    assert _fired(operator) == ["TENSOR.C5"]
    operator["desc"]["InputTensor"]["Strides"] = [4, 4, 1]
    assert "TENSOR.C4" in _fired(operator)


def test_the_spec_records_what_the_pages_leave_undefined(catalog: Any) -> None:
    rules = catalog.common.layout_rules
    assert [u.id for u in rules.undefined] == ["TENSOR.U1", "TENSOR.U2", "TENSOR.U3", "TENSOR.U4"]
    assert {t.name for t in catalog.common.tensor_layouts} == {
        "packed",
        "padded",
        "permuted",
        "broadcast",
        "oversized",
    }
    broadcast = next(t for t in catalog.common.tensor_layouts if t.name == "broadcast")
    assert broadcast.tensor_kinds == ("INPUT",)


def _model(folder: Path, operator: dict[str, Any], out: list[float]) -> Path:
    model = {
        "resources": {
            "In": {"initialValuesDataType": "FLOAT32", "initialValues": [0, 1, 2, 3]},
            "Idx": {"initialValuesDataType": "UINT32", "initialValues": [1, 0]},
            "Out": {"initialValuesDataType": "FLOAT32", "initialValues": out},
        },
        "dispatchables": {"gather": operator},
        "commands": [
            {
                "type": "dispatch",
                "dispatchable": "gather",
                "bindings": {"InputTensor": "In", "IndicesTensor": "Idx", "OutputTensor": "Out"},
            },
            {"type": "print", "resource": "Out"},
        ],
    }
    path = folder / "model.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_dispatch_honours_strides_and_buffer_sizes(tmp_path: Path, backend: str) -> None:
    printed: list[str] = []
    run_model(_model(tmp_path, GATHER, [0, 0, 0, 0]), load_backend(backend), write=printed.append)
    assert "".join(printed) == "Resource 'Out': 1, 3, 0, 2\n"
    operator, _, _ = strided_output()
    printed.clear()
    run_model(_model(tmp_path, operator, [-7.5] * 8), load_backend(backend), write=printed.append)
    assert "".join(printed) == "Resource 'Out': 1, 0, -7.5, -7.5, 3, 2, -7.5, -7.5\n"
    with pytest.raises(DispatchError, match="'Out' holds 24 bytes; OutputTensor needs 32"):
        run_model(_model(tmp_path, operator, [-7.5] * 6), load_backend(backend))


def _vectors(folder: Path) -> Path:
    """The strided-output example as an exported vector: the whole buffers, the view."""
    operator, inputs, expected = strided_output()
    case = folder / "gather_nd-issue-12"
    case.mkdir(parents=True)
    for name, array in inputs.items():
        np.save(case / f"{name}.npy", array)
    np.save(case / "expected_OutputTensor.npy", expected)
    bindings = {name: name for name in inputs}
    (case / "model.json").write_text(
        json.dumps(
            {
                "dispatchables": {"operator": operator},
                "commands": [
                    {"type": "dispatch", "dispatchable": "operator", "bindings": bindings}
                ],
            }
        )
    )
    view = {"Sizes": [1, 1, 2, 2], "Strides": [8, 8, 1, 4], "outside": "unchanged"}
    entry = {
        "id": case.name,
        "feature_level": "6_4",
        "outputs": {
            "OutputTensor": {"expected": "expected_OutputTensor.npy", "rule": "exact", "view": view}
        },
    }
    (folder / "manifest.json").write_text(json.dumps({"cases": [entry]}))
    return folder


@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_run_vectors_passes_the_example_and_checks_the_gaps(tmp_path: Path, backend: str) -> None:
    folder = _vectors(tmp_path)
    [result] = run_vectors(folder, load_backend(backend))
    assert result.outcome == "passed", result.message
    [broken] = run_vectors(folder, load_backend("tests.broken_backends:WritesOutputGaps"))
    assert broken.outcome == "failed" and "outside the strided view" in broken.message
    [untransposed] = run_vectors(folder, load_backend("tests.broken_backends:IgnoresInputStrides"))
    assert untransposed.outcome == "failed"
