"""The NumPy reference's backend contract for issue 14's operators: outputs are the spec's
output fields the desc gives, tensor arrays travel as lists, strided tensors (single or array
items) as buffers, and any float input (NaN, infinities, -0) runs without a warning."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

from dmlspec import Unsupported, reference
from dmlspec.reference import REFERENCE_OPERATORS, output_fields

from .reference_cases import CATALOG, ISSUE_14, call, example_case, example_ids, tensor


def test_every_issue_14_operator_is_computed() -> None:
    assert set(ISSUE_14) <= REFERENCE_OPERATORS
    assert all(CATALOG.operator(name).name == name for name in ISSUE_14)


def test_output_fields_are_the_specs_output_kinds() -> None:
    assert output_fields("TOP_K1", {"OutputValueTensor": {}, "OutputIndexTensor": {}}) == (
        "OutputValueTensor",
        "OutputIndexTensor",
    )
    assert output_fields("SPLIT", {"OutputTensors": []}) == ("OutputTensors",)
    assert output_fields("SLICE_GRAD", {"OutputGradientTensor": {}}) == ("OutputGradientTensor",)
    both = {"OutputCountTensor": {}, "OutputCoordinatesTensor": {}}
    assert output_fields("NONZERO_COORDINATES", both) == tuple(both)
    # An optional output the desc leaves out, or sets to null, is not an output.
    assert output_fields("RANDOM_GENERATOR", {"OutputTensor": {}}) == ("OutputTensor",)
    assert output_fields("RANDOM_GENERATOR", {"OutputTensor": {}, "OutputStateTensor": None}) == (
        "OutputTensor",
    )
    assert output_fields("ELEMENT_WISE_ADD", {"OutputTensor": {}}) == ("OutputTensor",)


def test_unknown_operators_are_unsupported() -> None:
    with pytest.raises(Unsupported):
        reference.run({"type": "DML_OPERATOR_NOT_AN_OPERATOR", "desc": {}}, {})


def test_join_reads_a_strided_input_item_through_its_view() -> None:
    # InputTensors[1] is {2, 1} with Strides {2, 1}: elements 0 and 2 of its buffer.
    desc = {
        "InputCount": 2,
        "InputTensors": [
            tensor("INT32", [2, 1]),
            {"DataType": "INT32", "Sizes": [2, 1], "Strides": [2, 1]},
        ],
        "OutputTensor": tensor("INT32", [2, 2]),
        "Axis": 1,
    }
    out = call("JOIN", desc, InputTensors=[[[1], [2]], [7, -1, 8, -1]])
    assert out["OutputTensor"].tolist() == [[1, 7], [2, 8]]


def test_split_writes_only_the_view_of_a_strided_output_item() -> None:
    # OutputTensors[0] is {2, 1} with Strides {2, 1} over a buffer of 4: its initial buffer
    # comes in the inputs at its place in the list; elements 1 and 3 must come back as given.
    desc = {
        "InputTensor": tensor("INT32", [2, 2]),
        "OutputCount": 2,
        "OutputTensors": [
            {"DataType": "INT32", "Sizes": [2, 1], "Strides": [2, 1]},
            tensor("INT32", [2, 1]),
        ],
        "Axis": 1,
    }
    inputs = {
        "InputTensor": np.array([[1, 2], [3, 4]], dtype=np.int32),
        "OutputTensors": [np.array([-9, -9, -9, -9], dtype=np.int32), None],
    }
    first, second = reference.run({"type": "SPLIT", "desc": desc}, inputs)["OutputTensors"]
    assert first.tolist() == [1, -9, 3, -9]
    assert second.tolist() == [[2], [4]]


def test_a_strided_output_keeps_its_gaps() -> None:
    desc = {
        "InputTensor": tensor("UINT8", [2]),
        "OutputTensor": {"DataType": "UINT8", "Sizes": [4], "Strides": [2]},
        "RepeatsCount": 1,
        "Repeats": [2],
    }
    inputs = {
        "InputTensor": np.array([5, 6], dtype=np.uint8),
        "OutputTensor": np.full(8, 200, dtype=np.uint8),
    }
    out = reference.run({"type": "TILE", "desc": desc}, inputs)["OutputTensor"]
    assert out.tolist() == [5, 200, 6, 200, 5, 200, 6, 200]


def test_both_outputs_of_a_two_output_operator() -> None:
    desc = {
        "InputTensor": tensor("FLOAT32", [3]),
        "OutputValueTensor": tensor("FLOAT32", [1]),
        "OutputIndexTensor": tensor("UINT64", [1]),
        "Axis": 0,
        "K": 1,
    }
    out = call("TOP_K", desc, InputTensor=[1, 3, 2])
    assert set(out) == {"OutputValueTensor", "OutputIndexTensor"}
    assert out["OutputIndexTensor"].dtype == np.uint64 and out["OutputIndexTensor"].tolist() == [1]


SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, -2.0]


@pytest.mark.parametrize(("name", "example_id"), example_ids(ISSUE_14))
def test_special_float_inputs_run_without_warnings(name: str, example_id: str) -> None:
    case = example_case(CATALOG.operator(name), example_id)
    assert case is not None
    inputs: dict[str, Any] = {}
    for field, value in case.inputs.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            value = (
                np.resize(np.array(SPECIAL), value.size).reshape(value.shape).astype(value.dtype)
            )
        elif isinstance(value, list):
            value = [
                np.resize(np.array(SPECIAL), v.size).reshape(v.shape).astype(v.dtype)
                if v.dtype.kind == "f"
                else v
                for v in value
            ]
        inputs[field] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outputs = reference.run(case.operator, inputs)
    assert set(outputs) == set(case.expected)
    for field, want in case.expected.items():
        got = outputs[field]
        for g, w in zip(got, want, strict=True) if isinstance(want, list) else [(got, want)]:
            assert g.shape == w.shape and g.dtype == w.dtype
