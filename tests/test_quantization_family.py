"""The quantization family (QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR): the size and type
rules and the requires rules firing by id, and the expression functions they read; hand-worked
results (halves to even, saturation, blocked scales, INT4, the dynamic scale and zero point) on
the kernels and the NumPy reference; onnxruntime's graphs by hand; the suites passing on the
kernels, the reference and onnxruntime (slow), and broken backends (halves rounded away from
zero, no saturation, a truncated dynamic zero point) caught."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import Unsupported, ops, reference
from dmlspec.expr.functions import FUNCTIONS
from dmlspec.validation import check_requires, validate_operator

from .sweeps import sweep
from .test_conformance import conformance

FAMILY = ("QUANTIZE", "DEQUANTIZE", "DYNAMIC_QUANTIZE_LINEAR")


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


def _both(operator: dict[str, Any], inputs: dict[str, Any]) -> list[dict[str, np.ndarray]]:
    """The outputs of the reference and of the kernel."""
    return [reference.run(operator, inputs), ops.run(operator, inputs)]


def _blocked_int4(name: str = "QUANTIZE") -> dict[str, Any]:
    """{2, 4} with one scale and zero point per two columns, INT4."""
    operator = _quantize(name)
    desc = operator["desc"]
    integers, floats = _tensor("INT4", [2, 4]), _tensor("FLOAT32", [2, 4])
    desc["InputTensor"], desc["OutputTensor"] = (
        (floats, integers) if name == "QUANTIZE" else (integers, floats)
    )
    desc["QuantizationTensors"] = [_tensor("FLOAT32", [1, 2]), _tensor("INT4", [1, 2])]
    return operator


BLOCK_SCALES = [np.array([[1.0, 0.5]], np.float32), np.array([[0, 1]], dtype="int4")]


def test_quantize_rounds_halves_to_even_and_saturates_per_block() -> None:
    # Columns 0-1: scale 1, zero point 0; columns 2-3: scale 0.5, zero point 1.
    # 0.5 -> 0 and 1.5 -> 2 (halves to even); 2.5 / 0.5 + 1 = 6; -100 / 0.5 + 1 saturates to
    # INT4's -8; 0.25 / 0.5 = 0.5 -> 0, + 1 = 1; 7 / 0.5 + 1 = 15 saturates to 7.
    x = np.array([[0.5, 1.5, 2.5, -100], [3, -3, 0.25, 7]], np.float32)
    expected = np.array([[0, 2, 6, -8], [3, -3, 1, 7]], dtype="int4")
    for outputs in _both(_blocked_int4(), {"InputTensor": x, "QuantizationTensors": BLOCK_SCALES}):
        assert outputs["OutputTensor"].dtype == np.dtype("int4")
        np.testing.assert_array_equal(outputs["OutputTensor"], expected)


def test_dequantize_subtracts_the_zero_point_and_multiplies_once_per_block() -> None:
    x = np.array([[0, 2, 6, -8], [3, -3, 1, 7]], dtype="int4")
    expected = np.array([[0, 2, 2.5, -4.5], [3, -3, 0, 3]], np.float32)
    for outputs in _both(
        _blocked_int4("DEQUANTIZE"), {"InputTensor": x, "QuantizationTensors": BLOCK_SCALES}
    ):
        np.testing.assert_array_equal(outputs["OutputTensor"], expected)


def test_quantize_records_both_sides_of_a_half_the_float32_quotient_decides() -> None:
    # 0.7 / 0.2 in FLOAT32 is 3.5 after rounding (-> 4, the even neighbour), the exact
    # quotient of the FLOAT32 values 3.4999999 (-> 3): both are correct results of round().
    operator = _quantize(
        QuantizationType="DML_QUANTIZATION_TYPE_SCALE",
        QuantizationTensorCount=1,
        QuantizationTensors=[_tensor("FLOAT32", [1, 1])],
        InputTensor=_tensor("FLOAT32", [1, 1]),
        OutputTensor=_tensor("INT8", [1, 1]),
    )
    inputs = {
        "InputTensor": np.array([[0.7]], np.float32),
        "QuantizationTensors": [np.array([[0.2]], np.float32)],
    }
    assert float(np.float32(0.7) / np.float32(0.2)) == 3.5
    _, collisions = reference.run_recording(operator, inputs)
    assert sorted(int(v) for v in collisions["OutputTensor"][(0,)]) == [3, 4]


def test_dynamic_quantize_linear_follows_the_pages_formulas() -> None:
    # InputMin -4, InputMax 5.5: OutputScale = 9.5 / 255; OutputZeroPoint = 0 - (-4) / scale
    # = 107.37 -> 107; outputs round(x / scale) + 107, clamped to [0, 255].
    x = np.array([[0, 2, -4], [-1, 1, 5.5]], np.float32)
    scale = np.float32(9.5) / np.float32(255)
    quantized = np.clip(np.rint(x / scale) + 107, 0, 255).astype(np.uint8)
    for outputs in _both(_dynamic(), {"InputTensor": x}):
        np.testing.assert_array_equal(outputs["OutputScaleTensor"], [[scale]])
        np.testing.assert_array_equal(outputs["OutputZeroPointTensor"], [[107]])
        np.testing.assert_array_equal(outputs["OutputTensor"], quantized)
    assert quantized.tolist() == [[107, 161, 0], [80, 134, 255]]


def test_onnxruntime_quantize_linear_graphs_match_the_reference() -> None:
    pytest.importorskip("onnxruntime")
    from dmlspec.backends.onnxruntime import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    x = np.array([[0.5, 1.5, 2.5, -100], [3, -3, 0.25, 7]], np.float32)
    quantized = np.array([[0, 2, 6, -8], [3, -3, 1, 7]], dtype="int4")
    for name, inputs in (("QUANTIZE", x), ("DEQUANTIZE", quantized)):
        operator = _blocked_int4(name)  # blocked: axis 1, block_size 2
        given = {"InputTensor": inputs, "QuantizationTensors": BLOCK_SCALES}
        want = reference.run(operator, given)["OutputTensor"]
        np.testing.assert_array_equal(backend.run(operator, given)["OutputTensor"], want)
    per_axis = _quantize(
        QuantizationType="DML_QUANTIZATION_TYPE_SCALE",
        QuantizationTensorCount=1,
        QuantizationTensors=[_tensor("FLOAT32", [1, 6])],
    )
    given = {
        "InputTensor": np.linspace(-4, 4, 24, dtype=np.float32).reshape(4, 6),
        "QuantizationTensors": [np.array([[0.5, 1, 2, -1, 0.25, 4]], np.float32)],
    }
    np.testing.assert_array_equal(
        backend.run(per_axis, given)["OutputTensor"],
        reference.run(per_axis, given)["OutputTensor"],
    )
    dynamic = {"InputTensor": np.array([[0, 2, -4], [-1, 1, 5.5]], np.float32)}
    for field, want in reference.run(_dynamic(), dynamic).items():
        np.testing.assert_array_equal(backend.run(_dynamic(), dynamic)[field], want)
    # Where ONNX differs (its range always holds 0; UINT8 only): declined.
    with pytest.raises(Unsupported, match="include 0"):
        backend.run(_dynamic(), {"InputTensor": np.arange(1, 7, dtype=np.float32).reshape(2, 3)})
    int8 = _dynamic(
        OutputTensor=_tensor("INT8", [2, 3]), OutputZeroPointTensor=_tensor("INT8", [1, 1])
    )
    with pytest.raises(Unsupported, match="UINT8 only"):
        backend.run(int8, dynamic)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_quantization_suites_pass(backend: str, tmp_path: Path) -> None:
    if "onnxruntime" in backend.lower():
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", *FAMILY, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert "failed" not in [test["outcome"] for test in results["tests"]]
    if backend in ("jax", "numpy"):
        assert "support cells hit 111/111" in run.stdout
    else:  # DYNAMIC_QUANTIZE_LINEAR's INT8 cells declined (ONNX has UINT8 only)
        assert "support cells hit 105/111" in run.stdout


@pytest.mark.parametrize(
    ("backend", "caught"),
    sweep(
        [
            ("HalvesAwayFromZero", {"QUANTIZE"}),
            ("Wrapping", {"QUANTIZE"}),
            ("TruncatedZeroPoint", {"DYNAMIC_QUANTIZE_LINEAR"}),
        ],
        ["halves", "wrap", "truncated-zero-point"],
    ),
)
def test_broken_quantization_backends_are_caught(
    backend: str, caught: set[str], tmp_path: Path
) -> None:
    # The operators it is caught on (the default set keeps one such run: it is the family's
    # quick conformance check)
    run = conformance(
        f"tests.quantization_backends:{backend}", tmp_path, "--ops", *caught, "--workers", "0"
    )
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {test["operator"] for test in results["tests"] if test["outcome"] == "failed"}
    assert failed == caught
