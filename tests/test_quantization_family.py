"""The quantization family (QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR): the size and type
rules and the requires rules firing by id, and the expression functions they read."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from dmlspec.expr.functions import FUNCTIONS
from dmlspec.validation import check_requires, validate_operator


def _tensor(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def _quantize(name: str = "QUANTIZE", **fields: Any) -> dict[str, Any]:
    """A blocked {4, 6} quantization: one scale and zero point per 2 rows and 3 columns."""
    floats, integers = _tensor("FLOAT32", [4, 6]), _tensor("INT8", [4, 6])
    desc = {
        "InputTensor": floats if name == "QUANTIZE" else integers,
        "QuantizationType": "DML_QUANTIZATION_TYPE_SCALE_ZERO_POINT",
        "QuantizationTensorCount": 2,
        "QuantizationTensors": [_tensor("FLOAT32", [2, 2]), _tensor("INT8", [2, 2])],
        "OutputTensor": integers if name == "QUANTIZE" else floats,
    }
    desc.update(fields)
    return {"type": f"DML_OPERATOR_{name}", "desc": copy.deepcopy(desc)}


def _dynamic(**fields: Any) -> dict[str, Any]:
    desc = {
        "InputTensor": _tensor("FLOAT32", [2, 3]),
        "OutputTensor": _tensor("UINT8", [2, 3]),
        "OutputScaleTensor": _tensor("FLOAT32", [1, 1]),
        "OutputZeroPointTensor": _tensor("UINT8", [1, 1]),
    }
    desc.update(fields)
    return {"type": "DML_OPERATOR_DYNAMIC_QUANTIZE_LINEAR", "desc": desc}


@pytest.mark.parametrize("name", ["QUANTIZE", "DEQUANTIZE"])
def test_the_per_tensor_per_axis_and_blocked_forms_are_valid(name: str) -> None:
    for sizes in ([1, 1], [4, 1], [1, 6], [2, 3], [4, 6]):
        quantization = [_tensor("FLOAT32", sizes), _tensor("INT8", sizes)]
        assert validate_operator(_quantize(name, QuantizationTensors=quantization)).valid
    scale_only = _quantize(
        name,
        QuantizationType="DML_QUANTIZATION_TYPE_SCALE",
        QuantizationTensorCount=1,
        QuantizationTensors=[_tensor("FLOAT32", [1, 6])],
    )
    assert validate_operator(scale_only).valid


def _with_items(name: str, scale: dict[str, Any], zero_point: dict[str, Any]) -> dict[str, Any]:
    return _quantize(name, QuantizationTensors=[scale, zero_point])


@pytest.mark.parametrize("name", ["QUANTIZE", "DEQUANTIZE"])
@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("C2", {"QuantizationType": "DML_QUANTIZATION_TYPE_NONE"}),
        ("C3", {"QuantizationTensorCount": 1, "QuantizationTensors": [_tensor("FLOAT32", [2, 2])]}),
        ("C4", {"OutputTensor": None}),  # the other tensor's type, sizes [4, 3]
        ("C5", {"QuantizationTensors": [_tensor("FLOAT16", [2, 2]), _tensor("INT8", [2, 2])]}),
        ("C6", {"QuantizationTensors": [_tensor("FLOAT32", [2, 2]), _tensor("UINT8", [2, 2])]}),
        ("C7", {"QuantizationTensors": [_tensor("FLOAT32", [3, 2]), _tensor("INT8", [3, 2])]}),
        ("C8", {"QuantizationTensors": [_tensor("FLOAT32", [2, 2]), _tensor("INT8", [1, 2])]}),
    ],
)
def test_quantize_and_dequantize_size_and_type_rules_fire_alone(
    name: str, rule: str, change: dict[str, Any]
) -> None:
    operator = _quantize(name, **change)
    if rule == "C4":
        operator["desc"]["OutputTensor"] = _tensor(
            "INT8" if name == "QUANTIZE" else "FLOAT32", [4, 3]
        )
    assert validate_operator(operator).fired() == (f"{name}.{rule}",)


def test_quantize_requires_non_zero_scales_and_leaves_nan_elements_undefined() -> None:
    operator = _quantize()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    x[1, 2] = np.nan
    scales = np.ones((2, 2), np.float32)
    inputs: dict[str, Any] = {
        "InputTensor": x,
        "QuantizationTensors": [scales, np.zeros((2, 2), np.int8)],
    }
    report = check_requires(operator, inputs)
    assert [v.constraint for v in report.violations] == ["QUANTIZE.R2"]
    assert report.undefined["OutputTensor"].sum() == 1 and report.undefined["OutputTensor"][1, 2]
    scales[1, 0] = 0
    report = check_requires(operator, inputs)
    assert [v.constraint for v in report.violations] == ["QUANTIZE.R1", "QUANTIZE.R2"]
    assert report.undefined["OutputTensor"].all()


@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("C1", {"OutputScaleTensor": _tensor("FLOAT32", [1])}),
        ("C2", {"OutputZeroPointTensor": _tensor("INT8", [1, 1])}),
        ("C3", {"OutputTensor": _tensor("UINT8", [2, 2])}),
        ("C4", {"OutputScaleTensor": _tensor("FLOAT32", [1, 2])}),
        ("C5", {"OutputZeroPointTensor": _tensor("UINT8", [2, 1])}),
    ],
)
def test_dynamic_quantize_linear_rules_fire_alone(rule: str, change: dict[str, Any]) -> None:
    assert validate_operator(_dynamic()).valid
    assert validate_operator(_dynamic(**change)).fired() == (f"DYNAMIC_QUANTIZE_LINEAR.{rule}",)


@pytest.mark.parametrize(
    ("values", "fired"),
    [
        ([-1, 0, 2, 3, 4, 5], []),
        ([1, 1, 2, 3, 4, 5], ["R4", "R5"]),  # the range leaves 0 out
        ([0, 0, 0, 0, 0, 0], ["R4", "R5"]),  # one value: a scale of 0
        ([-1, np.inf, 2, 3, 4, 5], ["R1", "R2", "R3"]),
    ],
)
def test_dynamic_quantize_linear_requires_a_finite_range_holding_zero(
    values: list[float], fired: list[str]
) -> None:
    inputs = {"InputTensor": np.array(values, np.float32).reshape(2, 3)}
    report = check_requires(_dynamic(), inputs)
    assert [v.constraint for v in report.violations] == [
        f"DYNAMIC_QUANTIZE_LINEAR.{r}" for r in fired
    ]
    assert all(mask.all() for mask in report.undefined.values())


def test_the_tensor_array_item_functions() -> None:
    items = [{"Sizes": [2, 3], "DataType": "FLOAT32"}, {"Sizes": [1, 3], "DataType": "INT8"}]
    assert FUNCTIONS["item_sizes"].impl(None, items, 1) == [1, 3]
    assert FUNCTIONS["item_data_type"].impl(None, items, 0) == "FLOAT32"
    from dmlspec.expr import Absent

    with pytest.raises(Absent):
        FUNCTIONS["item_sizes"].impl(None, items, 2)
    divides = FUNCTIONS["each_divides"].impl
    assert divides(None, [1, 2, 6], [4, 4, 6]) and not divides(None, [3], [4])
    assert not divides(None, [0], [4])
    spans = FUNCTIONS["spans"].impl
    assert spans(None, np.array([-1.0, np.nan, 2.0]), 0)
    assert not spans(None, np.array([1.0, 2.0]), 0) and not spans(None, np.zeros(3), 0)
