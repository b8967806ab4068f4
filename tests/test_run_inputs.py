"""`ops.run` (the backend contract on the JAX kernels): inputs checked against the desc with a
message naming the field, what the desc says and what was given; repeated runs of one operator
JSON (its parsed form cached) compute each call's own inputs."""

from __future__ import annotations

import copy
import gc
from typing import Any

import numpy as np
import pytest

from dmlspec import InvalidOperator, Unsupported, ops
from dmlspec.kernels import runtime

GATHER_ND = {
    "type": "DML_OPERATOR_GATHER_ND",
    "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [4, 3]},
        "IndicesTensor": {"DataType": "INT32", "Sizes": [2, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "InputDimensionCount": 2,
        "IndicesDimensionCount": 2,
    },
}
JOIN = {
    "type": "DML_OPERATOR_JOIN",
    "desc": {
        "InputCount": 2,
        "InputTensors": [
            {"DataType": "INT8", "Sizes": [1, 1, 1, 2]},
            {"DataType": "INT8", "Sizes": [1, 1, 1, 3]},
        ],
        "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 5]},
        "Axis": 3,
    },
}


def _gather_inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "InputTensor": rng.standard_normal((4, 3)).astype(np.float32),
        "IndicesTensor": rng.integers(0, 4, (2, 1)).astype(np.int32),
    }


def test_repeated_runs_of_one_operator_compute_their_own_inputs() -> None:
    for seed in range(3):
        inputs = _gather_inputs(seed)
        outputs = ops.run(GATHER_ND, inputs)
        expected = inputs["InputTensor"][inputs["IndicesTensor"][:, 0]]
        np.testing.assert_array_equal(outputs["OutputTensor"], expected)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"InputTensor": np.zeros((4, 3), np.float32)},
            "inputs lack IndicesTensor: the desc gives IndicesTensor",
        ),
        (
            {**_gather_inputs(0), "InputTensor": np.zeros((3, 4), np.float32)},
            "InputTensor must have shape [4, 3] and data type FLOAT32 as its desc says; "
            "got shape [3, 4] and FLOAT32",
        ),
        (
            {**_gather_inputs(0), "IndicesTensor": np.zeros((2, 1), np.int64)},
            "IndicesTensor must have shape [2, 1] and data type INT32 as its desc says; "
            "got shape [2, 1] and INT64",
        ),
    ],
)
def test_inputs_that_do_not_match_the_desc_are_named(inputs: dict[str, Any], message: str) -> None:
    ops.run(GATHER_ND, _gather_inputs(0))  # the operator's parsed form is cached first
    with pytest.raises(InvalidOperator, match=message.replace("[", r"\[").replace("]", r"\]")):
        ops.run(GATHER_ND, inputs)


def test_a_tensor_array_is_checked_item_by_item() -> None:
    first, second = np.array([[[[1, 2]]]], np.int8), np.array([[[[3, 4, 5]]]], np.int8)
    joined = ops.run(JOIN, {"InputTensors": [first, second]})["OutputTensor"]
    np.testing.assert_array_equal(joined, [[[[1, 2, 3, 4, 5]]]])
    with pytest.raises(InvalidOperator, match="InputTensors must be a list of 2 arrays"):
        ops.run(JOIN, {"InputTensors": [first]})
    with pytest.raises(InvalidOperator, match=r"InputTensors\[1\] must have shape"):
        ops.run(JOIN, {"InputTensors": [first, first]})


def _fill(start: float, delta: float = 1.5) -> dict[str, Any]:
    return {
        "type": "DML_OPERATOR_FILL_VALUE_SEQUENCE",
        "desc": {
            "ValueDataType": "FLOAT32",
            "ValueStart": start,
            "ValueDelta": delta,
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 3]},
        },
    }


def test_an_operator_changed_in_place_after_a_run_is_read_again() -> None:
    operator = copy.deepcopy(GATHER_ND)
    ops.run(operator, _gather_inputs(0))
    operator["desc"]["OutputTensor"]["Sizes"] = [2, 4]  # breaks the output-shape rule
    with pytest.raises(InvalidOperator, match="invalid GATHER_ND desc"):
        ops.run(operator, _gather_inputs(0))
    fill = _fill(1.0)
    np.testing.assert_array_equal(ops.run(fill, {})["OutputTensor"].ravel(), [1.0, 2.5, 4.0])
    fill["desc"]["ValueStart"] = 2.0
    np.testing.assert_array_equal(ops.run(fill, {})["OutputTensor"].ravel(), [2.0, 3.5, 5.0])


def test_operators_equal_in_python_but_not_in_json_are_told_apart() -> None:
    # Python's == holds for True and 1, and for -0.0 and 0.0: a cache keyed on it would skip
    # validating the first and return the second's zero with the wrong sign.
    ops.run(GATHER_ND, _gather_inputs(0))
    with_bool = copy.deepcopy(GATHER_ND)
    with_bool["desc"]["IndicesTensor"]["Sizes"] = [2, True]
    with pytest.raises(InvalidOperator):
        ops.run(with_bool, _gather_inputs(0))
    positive = ops.run(_fill(0.0, 0.0), {})["OutputTensor"].ravel()[0]
    negative = ops.run(_fill(-0.0, -0.0), {})["OutputTensor"].ravel()[0]  # -0.0 + 0 * -0.0
    assert not np.signbit(positive) and np.signbit(negative)


def test_repeated_small_runs_reuse_the_program_and_compute_their_own_inputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = np.array([[[[1, 2]]]], np.int8), np.array([[[[3, 4, 5]]]], np.int8)
    ops.run(JOIN, {"InputTensors": [first, second]})
    ops.run(GATHER_ND, _gather_inputs(0))

    def unexpected(*args: Any) -> Any:
        raise AssertionError("a repeated small run resolved its call again")

    monkeypatch.setattr(runtime.run, "_resolve", unexpected)
    for seed in range(1, 3):
        inputs = _gather_inputs(seed)
        outputs = ops.run(GATHER_ND, inputs)
        expected = inputs["InputTensor"][inputs["IndicesTensor"][:, 0]]
        np.testing.assert_array_equal(outputs["OutputTensor"], expected)
    items = (np.array([[[[7, 8]]]], np.int8), np.array([[[[9, 10, 11]]]], np.int8))  # a tuple
    joined = ops.run(JOIN, {"InputTensors": items})["OutputTensor"]
    np.testing.assert_array_equal(joined, [[[[7, 8, 9, 10, 11]]]])


def test_a_run_whose_program_was_freed_compiles_it_again() -> None:
    inputs = _gather_inputs(0)
    ops.run(GATHER_ND, inputs)
    runtime.cache._programs.clear()  # what the program LRU does to a program not used for long
    runtime.call._calls.clear()
    gc.collect()
    traced = runtime.trace_count()
    outputs = ops.run(GATHER_ND, inputs)
    np.testing.assert_array_equal(
        outputs["OutputTensor"], inputs["InputTensor"][inputs["IndicesTensor"][:, 0]]
    )
    assert runtime.trace_count() == traced + 1


def test_the_type_is_read_with_or_without_its_prefix() -> None:
    # DxDispatch models and validation accept both spellings; run finds the same kernel.
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    inputs = {"InputTensor": data, "IndicesTensor": np.array([[3], [0]], np.int32)}
    short = dict(GATHER_ND, type="GATHER_ND")
    np.testing.assert_array_equal(ops.run(short, inputs)["OutputTensor"], data[[3, 0]])
    with pytest.raises(Unsupported, match="no kernel for 'GATHER_NDD'"):
        ops.run(dict(GATHER_ND, type="GATHER_NDD"), inputs)
