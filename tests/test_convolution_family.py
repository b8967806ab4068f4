"""The convolution family (so far GEMM, CONVOLUTION, the integer and quantized matrix
multiplications, FOLD and UNFOLD): the generated suites pass on dmlspec's kernels, the NumPy
reference and onnxruntime, judged by the dot-product accuracy model (floating results) or
exactly (integers, quantized results within the page's open rounding); broken backends are
caught (FLOAT32 accumulated in FLOAT16, a filter flipped or padded on the wrong side, zero
points ignored, wrapping instead of saturating); DxDispatch's GEMM and convolution models run
through dispatch; hand-worked results of the pages' definitions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.interop.dispatch import run_model
from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT
from .sweeps import sweep
from .test_conformance import conformance

DXDISPATCH = REPO_ROOT.parent / "shared" / "reference" / "dxdispatch"
GEMM = {
    "type": "DML_OPERATOR_GEMM",
    "desc": {
        "ATensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "BTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},
        "CTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
        "TransA": "DML_MATRIX_TRANSFORM_NONE",
        "TransB": "DML_MATRIX_TRANSFORM_TRANSPOSE",
        "Alpha": 0.5,
        "Beta": -2.0,
    },
}


def test_gemm_follows_the_pages_formula() -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    b = np.array([[1, 0, -1], [2, 2, 2]], np.float32)
    c = np.array([[1, 1], [0, 3]], np.float32)
    inputs = {"ATensor": a, "BTensor": b, "CTensor": c}
    # Alpha * A x B^T + Beta * C, by hand: A x B^T = [[-2, 12], [-2, 30]].
    expected = np.array([[-1 - 2, 6 - 2], [-1 - 0, 15 - 6]], np.float32)
    np.testing.assert_array_equal(reference.run(GEMM, inputs)["OutputTensor"], expected)
    np.testing.assert_array_equal(ops.run(GEMM, inputs)["OutputTensor"], expected)
    value, bound, largest = reference.run_exact(GEMM, inputs)["OutputTensor"]
    np.testing.assert_array_equal(value, expected)
    # |Alpha| * |A| x |B|^T + |Beta| * |C|
    np.testing.assert_array_equal(bound, [[2 + 2, 6 + 2], [5 + 0, 15 + 6]])
    assert (largest >= bound).all()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_gemm_suite_passes(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "GEMM", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20
    assert "support cells hit 32/32" in run.stdout


def test_float32_accumulated_in_float16_is_caught(tmp_path: Path) -> None:
    run = conformance(
        "tests.convolution_backends:HalfAccumulatingGemm",
        tmp_path,
        "--ops",
        "GEMM",
        "--workers",
        "0",
    )
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    messages = [t.get("message", "") for t in results["tests"] if t["outcome"] == "failed"]
    assert messages
    junit = (tmp_path / "junit.xml").read_text()
    assert "elements beyond KS * max(bound * u, tiny) of the FLOAT64 reference" in junit


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
@pytest.mark.parametrize("model", ["dml_gemm.json"])
def test_dxdispatch_gemm_models_run(model: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_model(DXDISPATCH / model, load_backend("jax"), False)
    printed = capsys.readouterr().out
    # A = [1, 2, 3] (3x1), B = [4, 5, 6] (1x3), C = 2: output[i][j] = a_i * b_j + 2
    expected = np.outer([1, 2, 3], [4, 5, 6]) + 2
    for value in expected.reshape(-1):
        assert f"{float(value):g}" in printed or str(int(value)) in printed


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
def test_dxdispatch_gemm_graph_binds_the_owned_tensor_at_initialization(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # BTensor (DML_TENSOR_FLAG_OWNED_BY_DML) is bound by the dispatchable's own bindings;
    # A and B are 32x32 ones, so every output element is a sum of 32 ones.
    run_model(DXDISPATCH / "dml_gemm_graph.json", load_backend("jax"), False)
    printed = capsys.readouterr().out
    assert printed == "Resource 'output': " + ", ".join(["32"] * 1024) + "\n"


def _convolution(direction: str, mode: str, sizes: dict[str, list[int]], **fields: Any) -> Any:
    desc: dict[str, Any] = {
        name: {"DataType": "FLOAT32", "Sizes": value} for name, value in sizes.items()
    }
    desc.update(
        Mode=f"DML_CONVOLUTION_MODE_{mode}",
        Direction=f"DML_CONVOLUTION_DIRECTION_{direction}",
        DimensionCount=1,
        Strides=[1],
        Dilations=[1],
        StartPadding=[0],
        EndPadding=[0],
        OutputPadding=[0],
        GroupCount=1,
    )
    desc.update(fields)
    return {"type": "DML_OPERATOR_CONVOLUTION", "desc": desc}


@pytest.mark.parametrize(
    ("direction", "mode", "x", "output", "fields", "expected"),
    [
        # x = [1, 2, 3], filter [3, 4]: windows [1, 2] and [2, 3]
        ("FORWARD", "CROSS_CORRELATION", [1, 2, 3], 2, {}, [1 * 3 + 2 * 4, 2 * 3 + 3 * 4]),
        ("FORWARD", "CONVOLUTION", [1, 2, 3], 2, {}, [1 * 4 + 2 * 3, 2 * 4 + 3 * 3]),
        # OutputPadding: a zero after the windows
        ("FORWARD", "CROSS_CORRELATION", [1, 2, 3], 3, {"OutputPadding": [1]}, [11, 18, 0]),
        # x = [1, 2]: each element spreads the filter [3, 4] (flipped for CONVOLUTION)
        ("BACKWARD", "CROSS_CORRELATION", [1, 2], 3, {}, [3, 4 + 6, 8]),
        ("BACKWARD", "CONVOLUTION", [1, 2], 3, {}, [4, 3 + 8, 6]),
        ("BACKWARD", "CROSS_CORRELATION", [1, 2], 4, {"Strides": [2]}, [3, 4, 6, 8]),
        # StartPadding crops the transposed result's first element; OutputPadding extends it
        (
            "BACKWARD",
            "CROSS_CORRELATION",
            [1, 2],
            4,
            {"Strides": [2], "StartPadding": [1], "OutputPadding": [1]},
            [4, 6, 8, 0],
        ),
    ],
)
def test_convolution_follows_the_pages_definitions(
    direction: str, mode: str, x: list[int], output: int, fields: Any, expected: list[int]
) -> None:
    sizes = {
        "InputTensor": [1, 1, len(x)],
        "FilterTensor": [1, 1, 2],
        "OutputTensor": [1, 1, output],
    }
    operator = _convolution(direction, mode, sizes, **fields)
    inputs = {
        "InputTensor": np.array(x, np.float32).reshape(1, 1, -1),
        "FilterTensor": np.array([3, 4], np.float32).reshape(1, 1, 2),
    }
    want = np.array(expected, np.float32).reshape(1, 1, -1)
    np.testing.assert_array_equal(reference.run(operator, inputs)["OutputTensor"], want)
    np.testing.assert_array_equal(ops.run(operator, inputs)["OutputTensor"], want)


def test_grouped_convolution_and_bias_by_hand() -> None:
    # Two groups of one channel each, BACKWARD filter {InputChannels, Output/Group, 1}
    sizes = {
        "InputTensor": [1, 2, 2],
        "FilterTensor": [2, 1, 1],
        "BiasTensor": [1, 2, 1],
        "OutputTensor": [1, 2, 2],
    }
    inputs = {
        "InputTensor": np.array([[[1, 2], [3, 4]]], np.float32),
        "FilterTensor": np.array([[[10]], [[100]]], np.float32),
        "BiasTensor": np.array([[[0.5], [-1]]], np.float32),
    }
    expected = np.array([[[10.5, 20.5], [299, 399]]], np.float32)
    for direction in ("FORWARD", "BACKWARD"):
        operator = _convolution(direction, "CROSS_CORRELATION", sizes, GroupCount=2)
        np.testing.assert_array_equal(reference.run(operator, inputs)["OutputTensor"], expected)
        np.testing.assert_array_equal(ops.run(operator, inputs)["OutputTensor"], expected)


def _dxdispatch_desc(model: str) -> Any:
    document = json.loads((DXDISPATCH / model).read_text())
    (dispatchable,) = document["dispatchables"].values()
    return {"type": dispatchable["type"], "desc": dispatchable["desc"]}


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
@pytest.mark.parametrize("model", ["dml_convolution_2d.json", "dml_convolution_3d.json"])
def test_dxdispatch_convolutions_validate_and_a_longer_output_does_not(model: str) -> None:
    operator = _dxdispatch_desc(model)
    assert validate_operator(operator).valid
    operator["desc"]["OutputTensor"]["Sizes"][-1] += 1
    result = validate_operator(operator)
    assert not result.valid
    assert result.fired() == ("CONVOLUTION.C12",)
    (violation,) = result.violations
    assert violation.path == "/desc/OutputTensor/Sizes"
    assert "window_output_sizes" in violation.message


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # input 1..9 (3x3), filter 0.5 (2x2): half of each 2x2 window's sum
        ("dml_convolution_2d.json", [6, 8, 12, 14]),
        # input all 1 (3x3x3), filter 0.5 (2x2x2): 8 * 0.5 in every window
        ("dml_convolution_3d.json", [4] * 8),
    ],
)
def test_dxdispatch_convolution_models_run(
    model: str, expected: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    run_model(DXDISPATCH / model, load_backend("jax"), False)
    printed = capsys.readouterr().out
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", printed)]
    assert numbers[-len(expected) :] == expected, printed


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_convolution_suite_passes(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "CONVOLUTION", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20
    assert "support cells hit 36/36" in run.stdout


BROKEN_CONVOLUTIONS = ["FlippedCrossCorrelation", "SwappedPadding", "HalfPrecisionConvolution"]


@pytest.mark.parametrize("backend", sweep([[b] for b in BROKEN_CONVOLUTIONS], BROKEN_CONVOLUTIONS))
def test_broken_convolutions_are_caught(backend: str, tmp_path: Path) -> None:
    run = conformance(
        f"tests.convolution_backends:{backend}", tmp_path, "--ops", "CONVOLUTION", "--workers", "0"
    )
    assert run.returncode == 1, run.stdout[-3000:]
    junit = (tmp_path / "junit.xml").read_text()
    assert "elements beyond KS * max(bound * u, tiny) of the FLOAT64 reference" in junit


@pytest.mark.parametrize(
    ("rule", "direction", "change"),
    [
        ("CONVOLUTION.C8", "FORWARD", {"FilterTensor": [3, 1, 2], "OutputTensor": [1, 3, 3]}),
        ("CONVOLUTION.C9", "BACKWARD", {"FilterTensor": [4, 2, 2]}),
        ("CONVOLUTION.C10", "BACKWARD", {"GroupCount": 3, "OutputTensor": [1, 6, 5]}),
        ("CONVOLUTION.C11", "FORWARD", {"FilterTensor": [2, 1, 5], "OutputTensor": [1, 2, 1]}),
        ("CONVOLUTION.C14", "BACKWARD", {"OutputTensor": [1, 4, 6]}),
    ],
)
def test_channel_and_window_rules_fire_alone(rule: str, direction: str, change: Any) -> None:
    # Valid: FORWARD {1, 2, 4} * {2, 1, 2} in 2 groups -> {1, 2, 3}; BACKWARD {1, 2, 4} *
    # {2, 2, 2} in 2 groups -> {1, 4, 5}.
    sizes = {
        "InputTensor": [1, 2, 4],
        "FilterTensor": [2, 1, 2] if direction == "FORWARD" else [2, 2, 2],
        "OutputTensor": [1, 2, 3] if direction == "FORWARD" else [1, 4, 5],
    }
    valid = _convolution(direction, "CROSS_CORRELATION", sizes, GroupCount=2)
    assert validate_operator(valid).valid
    desc = json.loads(json.dumps(valid["desc"]))
    for name, value in change.items():
        if name.endswith("Tensor"):
            desc[name]["Sizes"] = value
        else:
            desc[name] = value
    assert validate_operator({**valid, "desc": desc}).fired() == (rule,)


# ---- MATRIX_MULTIPLY_INTEGER, MATRIX_MULTIPLY_INTEGER_TO_FLOAT, QUANTIZED_LINEAR_MATRIX_MULTIPLY
# The pages give no examples: these are worked by hand from their fields' text.


def _tensor(data_type: str, sizes: list[int]) -> dict[str, object]:
    return {"DataType": data_type, "Sizes": sizes}


MATRIX_MULTIPLY_INTEGER = {
    "type": "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER",
    "desc": {
        "ATensor": _tensor("UINT8", [2, 3]),
        "AZeroPointTensor": _tensor("UINT8", [2, 1]),  # per row
        "BTensor": _tensor("INT8", [3, 2]),
        "BZeroPointTensor": _tensor("INT8", [1, 2]),  # per column
        "OutputTensor": _tensor("INT32", [2, 2]),
    },
}


def test_matrix_multiply_integer_subtracts_zero_points_per_row_and_column() -> None:
    inputs = {
        "ATensor": np.array([[1, 2, 3], [4, 5, 6]], np.uint8),
        "AZeroPointTensor": np.array([[1], [2]], np.uint8),
        "BTensor": np.array([[1, -1], [2, 0], [-3, 5]], np.int8),
        "BZeroPointTensor": np.array([[1, -1]], np.int8),
    }
    # A - AZeroPoint = [[0, 1, 2], [2, 3, 4]], B - BZeroPoint = [[0, 0], [1, 1], [-4, 6]]
    expected = np.array([[0 + 1 - 8, 0 + 1 + 12], [0 + 3 - 16, 0 + 3 + 24]], np.int32)
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(
            run(MATRIX_MULTIPLY_INTEGER, inputs)["OutputTensor"], expected
        )


def test_a_zero_point_of_the_wrong_length_is_rejected_naming_the_rule() -> None:
    desc = dict(MATRIX_MULTIPLY_INTEGER["desc"], AZeroPointTensor=_tensor("UINT8", [3, 1]))  # type: ignore[arg-type]
    result = validate_operator({"type": "MATRIX_MULTIPLY_INTEGER", "desc": desc}, "5_2")
    assert [v.constraint for v in result.violations] == ["MATRIX_MULTIPLY_INTEGER.C6"]


def test_matrix_multiply_integer_to_float_scales_the_exact_sums() -> None:
    operator = {
        "type": "DML_OPERATOR_MATRIX_MULTIPLY_INTEGER_TO_FLOAT",
        "desc": {
            "ATensor": _tensor("INT8", [2, 2]),
            "AScaleTensor": _tensor("FLOAT32", [2, 1]),  # per row
            "BTensor": _tensor("INT8", [2, 2]),
            "BScaleTensor": _tensor("FLOAT32", [1, 2]),  # per column
            "BiasTensor": _tensor("FLOAT32", [2, 2]),
            "OutputTensor": _tensor("FLOAT32", [2, 2]),
        },
    }
    inputs = {
        "ATensor": np.array([[1, 2], [3, 4]], np.int8),
        "AScaleTensor": np.array([[0.5], [2.0]], np.float32),
        "BTensor": np.array([[1, 0], [0, 1]], np.int8),  # the identity: the sums are A
        "BScaleTensor": np.array([[1.0, 10.0]], np.float32),
        "BiasTensor": np.array([[0.0, 1.0], [0.0, -80.0]], np.float32),
    }
    # A * AScale (per row) * BScale (per column) + Bias
    expected = np.array([[0.5, 1 * 10.0 + 1], [6.0, 80.0 - 80]], np.float32)
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(run(operator, inputs)["OutputTensor"], expected)
    value, bound, _ = reference.run_exact(operator, inputs)["OutputTensor"]
    np.testing.assert_array_equal(value, expected)
    np.testing.assert_array_equal(bound, [[0.5, 11.0], [6.0, 160.0]])  # |sum| * |scales| + |bias|


def test_quantized_linear_matrix_multiply_rounds_and_saturates() -> None:
    operator = {
        "type": "DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY",
        "desc": {
            "ATensor": _tensor("UINT8", [1, 2]),
            "AScaleTensor": _tensor("FLOAT32", [1]),
            "AZeroPointTensor": _tensor("UINT8", [1]),
            "BTensor": _tensor("INT8", [2, 3]),
            "BScaleTensor": _tensor("FLOAT32", [1]),
            "OutputScaleTensor": _tensor("FLOAT32", [1]),
            "OutputZeroPointTensor": _tensor("UINT8", [1]),
            "OutputTensor": _tensor("UINT8", [1, 3]),
        },
    }
    inputs = {
        "ATensor": np.array([[10, 20]], np.uint8),
        "AScaleTensor": np.array([0.5], np.float32),
        "AZeroPointTensor": np.array([10], np.uint8),
        "BTensor": np.array([[1, 3, 100], [2, -4, 100]], np.int8),
        "BScaleTensor": np.array([1.0], np.float32),
        "OutputScaleTensor": np.array([4.0], np.float32),
        "OutputZeroPointTensor": np.array([250], np.uint8),
    }
    # Dequantized A = [0, 5]; A x B = [10, -20, 500]; / 4 = [2.5, -5, 125]; round() (a tie:
    # 2 or 3) + 250 = [252 or 253, 245, 375], clamped to UINT8: [.., 245, 255] (not 375 - 256).
    for run in (reference.run, ops.run):
        got = run(operator, inputs)["OutputTensor"]
        assert got[0, 0] in (252, 253)
        np.testing.assert_array_equal(got[0, 1:], [245, 255])


def test_quantized_linear_matrix_multiply_quantizes_a_product_beyond_float32s_range() -> None:
    operator = {
        "type": "DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY",
        "desc": {
            "ATensor": _tensor("INT8", [1, 1]),
            "AScaleTensor": _tensor("FLOAT32", [1]),
            "BTensor": _tensor("INT8", [1, 1]),
            "BScaleTensor": _tensor("FLOAT32", [1]),
            "OutputScaleTensor": _tensor("FLOAT32", [1]),
            "OutputTensor": _tensor("INT8", [1, 1]),
        },
    }
    inputs = {
        "ATensor": np.array([[100]], np.int8),
        "AScaleTensor": np.array([1e25], np.float32),
        "BTensor": np.array([[-100]], np.int8),
        "BScaleTensor": np.array([1e10], np.float32),
        "OutputScaleTensor": np.array([1e38], np.float32),
    }
    # -10^4 * 1e25 * 1e10 = -1e39 (beyond FLOAT32), / 1e38 = -10 (the scales as FLOAT32 rounds
    # them): not -infinity saturated to INT8's -128.
    for run in (reference.run, ops.run):
        assert run(operator, inputs)["OutputTensor"][0, 0] == -10


QUANTIZED = [
    ("MATRIX_MULTIPLY_INTEGER", "jax", "65/65"),
    ("MATRIX_MULTIPLY_INTEGER", "numpy", "65/65"),
    ("MATRIX_MULTIPLY_INTEGER", "onnxruntime", "65/65"),
    ("MATRIX_MULTIPLY_INTEGER_TO_FLOAT", "jax", "60/60"),
    ("MATRIX_MULTIPLY_INTEGER_TO_FLOAT", "numpy", "60/60"),
    ("MATRIX_MULTIPLY_INTEGER_TO_FLOAT", "onnxruntime", "60/60"),
    ("QUANTIZED_LINEAR_MATRIX_MULTIPLY", "jax", "72/72"),
    ("QUANTIZED_LINEAR_MATRIX_MULTIPLY", "numpy", "72/72"),
    ("QUANTIZED_LINEAR_MATRIX_MULTIPLY", "onnxruntime", "72/72"),
]


def _passes_its_suite(operator: str, backend: str, cells: str, tmp_path: Path) -> None:
    """One operator's suite on one backend: nothing failed, at least 20 passed, every cell hit."""
    if "onnxruntime" in backend.lower():
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", operator, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20
    assert f"support cells hit {cells}" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("operator", "backend", "cells"), QUANTIZED)
def test_the_integer_and_quantized_suites_pass(
    operator: str, backend: str, cells: str, tmp_path: Path
) -> None:
    _passes_its_suite(operator, backend, cells, tmp_path)


def _fails_its_suite(backend: str, operator: str, tmp_path: Path) -> None:
    """A broken backend of tests/convolution_backends.py runs one operator's suite and fails."""
    run = conformance(
        f"tests.convolution_backends:{backend}", tmp_path, "--ops", operator, "--workers", "0"
    )
    assert run.returncode == 1, run.stdout[-3000:]


BROKEN_MATMULS = [
    ("IgnoringZeroPoints", "MATRIX_MULTIPLY_INTEGER"),
    ("IgnoringZeroPoints", "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"),
    ("WrappingQuantizedMatMul", "QUANTIZED_LINEAR_MATRIX_MULTIPLY"),
]


@pytest.mark.parametrize(
    ("backend", "operator"), sweep(BROKEN_MATMULS, [f"{b}-{o}" for b, o in BROKEN_MATMULS])
)
def test_broken_integer_and_quantized_backends_are_caught(
    backend: str, operator: str, tmp_path: Path
) -> None:
    _fails_its_suite(backend, operator, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text())
    failed = [t for t in results["tests"] if t["outcome"] == "failed"]
    assert failed
    assert "OutputTensor differs from the reference" in (tmp_path / "junit.xml").read_text()


def _window_op(
    name: str, input_sizes: list[int], output_sizes: list[int], **fields: Any
) -> dict[str, Any]:
    return {
        "type": f"DML_OPERATOR_{name}",
        "desc": {
            "InputTensor": {"DataType": "INT32", "Sizes": input_sizes},
            "OutputTensor": {"DataType": "INT32", "Sizes": output_sizes},
            "DimensionCount": 1,
            **fields,
        },
    }


def test_unfold_by_hand() -> None:
    # x = [1, 2, 3, 4], window 2, stride 2, dilation 1, one zero before and after:
    # padded [0, 1, 2, 3, 4, 0] -> blocks [0, 1], [2, 3], [4, 0]; rows: window element 0, 1.
    operator = _window_op(
        "UNFOLD",
        [1, 1, 4],
        [1, 2, 3],
        WindowSizes=[2],
        Strides=[2],
        Dilations=[1],
        StartPadding=[1],
        EndPadding=[1],
    )
    x = np.array([[[1, 2, 3, 4]]], np.int32)
    expected = np.array([[[0, 2, 4], [1, 3, 0]]], np.int32)
    np.testing.assert_array_equal(
        reference.run(operator, {"InputTensor": x})["OutputTensor"], expected
    )
    np.testing.assert_array_equal(ops.run(operator, {"InputTensor": x})["OutputTensor"], expected)


def test_fold_by_hand() -> None:
    # Output of 4, window 2, dilation 2, stride 1, no padding: blocks cover {0, 2} and {1, 3};
    # columns [a0, a1] (first window element per block) and [b0, b1] (second).
    operator = _window_op(
        "FOLD",
        [1, 2, 2],
        [1, 1, 4],
        WindowSizes=[2],
        Strides=[1],
        Dilations=[2],
        StartPadding=[0],
        EndPadding=[0],
    )
    x = np.array([[[10, 20], [1, 2]]], np.int32)
    expected = np.array([[[10, 20, 1, 2]]], np.int32)
    np.testing.assert_array_equal(
        reference.run(operator, {"InputTensor": x})["OutputTensor"], expected
    )
    np.testing.assert_array_equal(ops.run(operator, {"InputTensor": x})["OutputTensor"], expected)
    # Overlapping windows summed: window 3, stride 1 over 4 -> 2 blocks; element 1 and 2 twice.
    overlap = _window_op(
        "FOLD",
        [1, 3, 2],
        [1, 1, 4],
        WindowSizes=[3],
        Strides=[1],
        Dilations=[1],
        StartPadding=[0],
        EndPadding=[0],
    )
    y = np.array([[[1, 10], [2, 20], [3, 30]]], np.int32)
    expected = np.array([[[1, 2 + 10, 3 + 20, 30]]], np.int32)
    np.testing.assert_array_equal(
        reference.run(overlap, {"InputTensor": y})["OutputTensor"], expected
    )
    floats = {"DataType": "FLOAT32"}
    desc = {
        **overlap["desc"],
        "InputTensor": {**floats, "Sizes": [1, 3, 2]},
        "OutputTensor": {**floats, "Sizes": [1, 1, 4]},
    }
    operator = {**overlap, "desc": desc}
    inputs = {"InputTensor": -y.astype(np.float32)}
    value, bound, _ = reference.run_exact(operator, inputs)["OutputTensor"]
    np.testing.assert_array_equal(value, -expected)
    np.testing.assert_array_equal(bound, expected)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_fold_and_unfold_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "FOLD", "UNFOLD", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "support cells hit 58/58" in run.stdout


@pytest.mark.slow  # a second broken backend of the family: FlippedCrossCorrelation runs by default
def test_padding_on_the_wrong_side_is_caught(tmp_path: Path) -> None:
    run = conformance(
        "tests.convolution_backends:SwappedPaddingFold",
        tmp_path,
        "--ops",
        "FOLD",
        "UNFOLD",
        "--workers",
        "0",
    )
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {t["nodeid"].split("::")[0] for t in results["tests"] if t["outcome"] == "failed"}
    assert any("test_fold" in f for f in failed) and any("test_unfold" in f for f in failed)


# ---- CONVOLUTION_INTEGER, QUANTIZED_LINEAR_CONVOLUTION
# The pages give no examples: worked by hand from their fields' text (forward cross-correlation,
# zero points subtracted first, the padding the input's zero point).


def _integer_convolution(
    name: str, sizes: dict[str, list[int]], types: dict[str, str], **fields: Any
) -> dict[str, Any]:
    spatial = len(sizes["InputTensor"]) - 2
    return {
        "type": f"DML_OPERATOR_{name}",
        "desc": {
            **{tensor: _tensor(types[tensor], s) for tensor, s in sizes.items()},
            "DimensionCount": spatial,
            "Strides": [1] * spatial,
            "Dilations": [1] * spatial,
            "StartPadding": [0] * spatial,
            "EndPadding": [0] * spatial,
            "GroupCount": 1,
            **fields,
        },
    }


_PADDED = {
    "InputTensor": [1, 1, 4],
    "InputZeroPointTensor": [1, 1, 1],  # the zero points share a DimensionCount (C1)
    "FilterTensor": [2, 1, 2],
    "FilterZeroPointTensor": [1, 2, 1],  # per output channel
    "OutputTensor": [1, 2, 4],
}
_PADDED_INPUTS = {
    "InputTensor": np.array([[[10, 12, 14, 16]]], np.uint8),
    "InputZeroPointTensor": np.array([[[10]]], np.uint8),
    "FilterTensor": np.array([[[2, -1]], [[3, 5]]], np.int8),
    "FilterZeroPointTensor": np.array([[[1], [3]]], np.int8),
}


def test_convolution_integer_subtracts_zero_points_and_pads_with_the_inputs() -> None:
    types = {"InputTensor": "UINT8", "InputZeroPointTensor": "UINT8", "OutputTensor": "INT32"}
    types |= {"FilterTensor": "INT8", "FilterZeroPointTensor": "INT8"}
    operator = _integer_convolution("CONVOLUTION_INTEGER", _PADDED, types, StartPadding=[1])
    assert validate_operator(operator, "4_0").valid
    # Input - 10 = [0, 2, 4, 6], one padding cell before it that is the zero point (0 after the
    # subtraction); filter - [1, 3] = [[1, -2], [0, 2]]; windows of 2 over [0, 0, 2, 4, 6]:
    # channel 0: [0*1 + 0*-2, 0*1 + 2*-2, 2*1 + 4*-2, 4*1 + 6*-2]; channel 1: 2 * [0, 2, 4, 6].
    expected = np.array([[[0, -4, -6, -8], [0, 4, 8, 12]]], np.int32)
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(run(operator, _PADDED_INPUTS)["OutputTensor"], expected)
    got = ops.convolution_integer(
        _PADDED_INPUTS["InputTensor"],
        _PADDED_INPUTS["FilterTensor"],
        InputZeroPointTensor=_PADDED_INPUTS["InputZeroPointTensor"],
        FilterZeroPointTensor=_PADDED_INPUTS["FilterZeroPointTensor"],
        OutputTensor={"DataType": "INT32"},  # its sizes derived (C13)
        DimensionCount=1,
        Strides=[1],
        Dilations=[1],
        StartPadding=[1],
        EndPadding=[0],
        GroupCount=1,
    )
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_grouped_strided_convolution_integer_by_hand() -> None:
    sizes = {"InputTensor": [1, 2, 3, 3], "InputZeroPointTensor": [1, 1, 1, 1]}
    sizes |= {"FilterTensor": [2, 1, 1, 1], "OutputTensor": [1, 2, 2, 2]}
    types = {"InputTensor": "UINT8", "InputZeroPointTensor": "UINT8"}
    types |= {"FilterTensor": "INT8", "OutputTensor": "INT32"}
    operator = _integer_convolution(
        "CONVOLUTION_INTEGER", sizes, types, Strides=[2, 2], GroupCount=2
    )
    x = np.arange(18, dtype=np.uint8).reshape(1, 2, 3, 3)
    inputs = {
        "InputTensor": x,
        "InputZeroPointTensor": np.full((1, 1, 1, 1), 4, np.uint8),
        "FilterTensor": np.array([-1, 2], np.int8).reshape(2, 1, 1, 1),
    }
    # Each group: one input channel, one 1x1 filter; stride 2 takes rows and columns 0 and 2.
    expected = np.array([[[[4, 2], [-2, -4]], [[10, 14], [22, 26]]]], np.int32)
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(run(operator, inputs)["OutputTensor"], expected)


def test_quantized_linear_convolution_scales_biases_rounds_and_saturates() -> None:
    sizes = {**_PADDED, "InputScaleTensor": [1], "FilterScaleTensor": [2, 1]}
    sizes |= {"BiasTensor": [1, 2, 1], "OutputScaleTensor": [1], "OutputZeroPointTensor": [1]}
    types = {"InputTensor": "UINT8", "InputZeroPointTensor": "UINT8", "OutputTensor": "UINT8"}
    types |= {"FilterTensor": "INT8", "FilterZeroPointTensor": "INT8", "BiasTensor": "INT32"}
    types |= {"OutputZeroPointTensor": "UINT8"}
    scales = ("InputScaleTensor", "FilterScaleTensor", "OutputScaleTensor")
    types |= dict.fromkeys(scales, "FLOAT32")
    operator = _integer_convolution("QUANTIZED_LINEAR_CONVOLUTION", sizes, types, StartPadding=[1])
    assert validate_operator(operator, "5_2").valid
    inputs = {
        **_PADDED_INPUTS,
        "InputScaleTensor": np.array([0.5], np.float32),
        "FilterScaleTensor": np.array([[0.25], [2.0]], np.float32),  # per output channel
        "BiasTensor": np.array([[[4], [240]]], np.int32),
        "OutputScaleTensor": np.array([1.0], np.float32),
        "OutputZeroPointTensor": np.array([10], np.uint8),
    }
    # The sums above plus Bias: [4, 0, -2, -4] and [240, 244, 248, 252]; times 0.5 * 0.25 and
    # 0.5 * 2: [0.5, 0, -0.25, -0.5] (two ties: 0 or 1, -0 or -1) and [240, 244, 248, 252];
    # + 10, clamped to UINT8: [10|11, 10, 10, 9|10] and [250, 254, 255, 255] (not 258 - 256).
    for run in (reference.run, ops.run):
        got = run(operator, inputs)["OutputTensor"]
        assert got[0, 0, 0] in (10, 11) and got[0, 0, 3] in (9, 10)
        np.testing.assert_array_equal(got[0, 0, 1:3], [10, 10])
        np.testing.assert_array_equal(got[0, 1], [250, 254, 255, 255])


def test_a_zero_point_per_input_channel_is_rejected_naming_the_rule() -> None:
    types = {"InputTensor": "UINT8", "InputZeroPointTensor": "UINT8", "OutputTensor": "INT32"}
    types |= {"FilterTensor": "INT8", "FilterZeroPointTensor": "INT8"}
    sizes = {**_PADDED, "InputTensor": [1, 3, 4], "FilterTensor": [2, 3, 1]}
    operator = _integer_convolution("CONVOLUTION_INTEGER", sizes, types)
    assert validate_operator(operator, "4_0").valid
    operator["desc"]["FilterZeroPointTensor"]["Sizes"] = [1, 3, 1]  # InputChannelCount
    assert validate_operator(operator, "4_0").fired() == ("CONVOLUTION_INTEGER.C5",)


@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("CONVOLUTION_INTEGER.C10", {"FilterTensor": [2, 2, 2]}),
        ("CONVOLUTION_INTEGER.C11", {"FilterTensor": [3, 1, 2], "OutputTensor": [1, 3, 3]}),
        ("CONVOLUTION_INTEGER.C12", {"FilterTensor": [2, 1, 5], "OutputTensor": [1, 2, 1]}),
        ("CONVOLUTION_INTEGER.C13", {"OutputTensor": [1, 2, 4]}),
        ("CONVOLUTION_INTEGER.C14", {"InputZeroPointTensor": [1, 2, 1]}),
    ],
)
def test_integer_convolution_rules_fire_alone(rule: str, change: Any) -> None:
    # Valid: {1, 2, 4} * {2, 1, 2} in 2 groups -> {1, 2, 3}.
    sizes = {"InputTensor": [1, 2, 4], "InputZeroPointTensor": [1, 1, 1]}
    sizes |= {"FilterTensor": [2, 1, 2], "OutputTensor": [1, 2, 3]}
    types = {"InputTensor": "INT8", "InputZeroPointTensor": "INT8"}
    types |= {"FilterTensor": "INT8", "OutputTensor": "INT32"}
    valid = _integer_convolution("CONVOLUTION_INTEGER", sizes, types, GroupCount=2)
    assert validate_operator(valid).valid
    desc = json.loads(json.dumps(valid["desc"]))
    for name, value in change.items():
        desc[name]["Sizes"] = value
    assert validate_operator({**valid, "desc": desc}).fired() == (rule,)


INTEGER_CONVOLUTIONS = [
    ("CONVOLUTION_INTEGER", "jax", "37/37"),
    ("CONVOLUTION_INTEGER", "numpy", "37/37"),
    ("CONVOLUTION_INTEGER", "onnxruntime", "37/37"),
    ("QUANTIZED_LINEAR_CONVOLUTION", "jax", "120/120"),
    ("QUANTIZED_LINEAR_CONVOLUTION", "numpy", "120/120"),
    ("QUANTIZED_LINEAR_CONVOLUTION", "onnxruntime", "120/120"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("operator", "backend", "cells"), INTEGER_CONVOLUTIONS)
def test_the_integer_convolution_suites_pass(
    operator: str, backend: str, cells: str, tmp_path: Path
) -> None:
    _passes_its_suite(operator, backend, cells, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "operator"),
    [
        ("IgnoringZeroPoints", "CONVOLUTION_INTEGER"),
        ("WrappingQuantizedConvolution", "QUANTIZED_LINEAR_CONVOLUTION"),
        ("SwappedPadding", "CONVOLUTION_INTEGER"),
    ],
)
def test_broken_integer_convolutions_are_caught(
    backend: str, operator: str, tmp_path: Path
) -> None:
    _fails_its_suite(backend, operator, tmp_path)
    assert "OutputTensor differs from the reference" in (tmp_path / "junit.xml").read_text()
