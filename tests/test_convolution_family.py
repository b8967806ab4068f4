"""The convolution family (so far GEMM): the generated suites pass on dmlspec's kernels, the
NumPy reference and onnxruntime, judged by the dot-product accuracy model; a backend that
accumulates FLOAT32 in FLOAT16 is caught; DxDispatch's GEMM models run through dispatch."""

from __future__ import annotations

import json
from pathlib import Path

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
