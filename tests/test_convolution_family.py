"""The convolution family (so far GEMM, FOLD and UNFOLD): the generated suites pass on
dmlspec's kernels, the NumPy reference and onnxruntime, judged by the dot-product accuracy
model; a backend that accumulates FLOAT32 in FLOAT16 is caught, and one with FOLD's and
UNFOLD's padding on the wrong side; DxDispatch's GEMM models run through dispatch; FOLD and
UNFOLD by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.interop.dispatch import run_model

from .conftest import REPO_ROOT
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


@pytest.mark.parametrize("backend", ["jax", "numpy", "tests.convolution_backends:OnnxRuntimeAt6_4"])
def test_the_fold_and_unfold_suites_pass(backend: str, tmp_path: Path) -> None:
    if "OnnxRuntime" in backend:
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", "FOLD", "UNFOLD", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "support cells hit 58/58" in run.stdout


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
