"""Data movement, reductions, scans and generators (issue 14): family primitives, the
reference, generated suites; the suites catch a broken backend per operator group and pass a
correct one whose sums differ within the accumulated-rounding bound; DxDispatch's models of
these operators run through `dmlspec dispatch`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dmlspec import load_catalog, ops
from dmlspec.generate.dest.kernels import function_name
from dmlspec.reference import REFERENCE_OPERATORS

from .sweeps import sweep
from .test_conformance import conformance, workers

FAMILY = sorted(
    s.name
    for s in load_catalog().with_kernels
    if s.checked_kernel.primitive in ("data_movement", "reduction", "generator")
    or s.name == "VALUE_SCALE_2D"
)
DXDISPATCH = Path(__file__).resolve().parents[2] / "shared" / "reference" / "dxdispatch"

# One broken backend per operator group (tests/data_movement_backends.py), with its operator.
BROKEN = [
    ("GatherNegativeIndicesClamped", "GATHER"),  # gathers
    ("SliceIgnoresOffsets", "SLICE1"),  # slices
    ("ReflectionIsSymmetric", "PADDING1"),  # padding
    ("JoinReversed", "JOIN"),  # join and split (tensor arrays)
    ("ArgMaxLastOfTies", "ARGMAX"),  # arg reductions
    ("SumInFloat16", "REDUCE"),  # reductions
    ("ScanAlwaysInclusive", "CUMULATIVE_SUMMATION"),  # scans
    ("TopKUnsorted", "TOP_K1"),  # top-k
    ("NonzeroCountsZeros", "NONZERO_COORDINATES"),  # nonzero
    ("RandomStateNotAdvanced", "RANDOM_GENERATOR"),  # generators
]


def test_the_family_is_every_operator_of_the_issue() -> None:
    assert set(FAMILY) >= {
        "GATHER", "GATHER_ELEMENTS", "GATHER_ND1", "SLICE", "SLICE1", "SLICE_GRAD", "PADDING",
        "PADDING1", "TILE", "JOIN", "SPLIT", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
        "DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "ONE_HOT", "REVERSE_SUBSEQUENCES", "DIAGONAL_MATRIX",
        "DIAGONAL_MATRIX1", "FILL_VALUE_CONSTANT", "NONZERO_COORDINATES", "TOP_K", "TOP_K1",
        "REDUCE", "ARGMIN", "ARGMAX", "CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT",
        "VALUE_SCALE_2D", "RANDOM_GENERATOR",
    }  # fmt: skip
    assert set(FAMILY) <= REFERENCE_OPERATORS
    for name in FAMILY:
        assert hasattr(ops, function_name(name)), name


def test_ops_take_and_return_tensor_arrays_and_several_outputs() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.float32).reshape(2, 2)
    joined = ops.join([a, b], Axis=1, OutputTensor={"DataType": "FLOAT32", "Sizes": [2, 5]})
    np.testing.assert_array_equal(np.asarray(joined), np.concatenate([a, b], axis=1))
    first, second = ops.split(
        np.asarray(joined),
        Axis=1,
        OutputTensors=[
            {"DataType": "FLOAT32", "Sizes": [2, 3]},
            {"DataType": "FLOAT32", "Sizes": [2, 2]},
        ],
    )
    np.testing.assert_array_equal(np.asarray(first), a)
    np.testing.assert_array_equal(np.asarray(second), b)
    x = np.array([[3, 1, 3, 2]], dtype=np.float32)
    values, indices = ops.top_k1(
        x,
        Axis=1,
        K=2,
        AxisDirection="DML_AXIS_DIRECTION_DECREASING",
        OutputIndexTensor={"DataType": "UINT32", "Sizes": [1, 2]},  # values: derived
    )
    np.testing.assert_array_equal(np.asarray(values), [[3, 3]])
    np.testing.assert_array_equal(np.asarray(indices), [[0, 2]])  # ties: the lower index first


@pytest.mark.parametrize(("backend", "operator"), sweep(BROKEN, [b for b, _ in BROKEN]))
def test_ci_profile_catches_a_broken_family_backend(
    tmp_path: Path, backend: str, operator: str
) -> None:
    result = conformance(f"tests.data_movement_backends:{backend}", tmp_path, "--ops", operator)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert [t for t in results["tests"] if t["outcome"] == "failed"]


def test_a_sum_in_another_order_passes(tmp_path: Path) -> None:
    result = conformance("tests.data_movement_backends:SumReordered", tmp_path, "--ops", "REDUCE")
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.slow
def test_jax_and_numpy_pass_the_family_and_hit_every_cell(tmp_path: Path) -> None:
    for backend in ("jax", "numpy"):
        result = conformance(backend, tmp_path / backend, "--workers", workers(), "--ops", *FAMILY)
        assert result.returncode == 0, (backend, result.stdout[-3000:])
        results = json.loads((tmp_path / backend / "results.json").read_text())
        assert results["coverage"]["hit"] == results["coverage"]["total"]
        assert not [t for t in results["tests"] if t["outcome"] in ("failed", "xfailed")]


@pytest.mark.slow
def test_onnxruntime_passes_the_family_but_for_its_listed_divergences(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime", reason="the peers extra is not installed")
    result = conformance("onnxruntime", tmp_path, "--workers", workers(), "--ops", *FAMILY)
    assert result.returncode == 0, result.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert not [t for t in results["tests"] if t["outcome"] == "xpassed"]


@pytest.mark.parametrize(
    ("model", "printed"),
    [
        ("dml_join.json", {"Out": "1, 2, 3, 100, 115, 5, 6, 7, 8, 9"}),
        ("dml_split.json", {"Out1": "1, 2", "Out2": "3, 4", "Out3": "5, 6"}),
        ("dml_slice.json", None),
        ("dml_reduce.json", None),
        ("dml_cumulative_product.json", None),
    ],
)
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_dxdispatch_models_run(model: str, printed: dict[str, str] | None, backend: str) -> None:
    """DxDispatch's own models of these operators; where the model's output follows from its
    resources by hand (JOIN, SPLIT), the printed values are checked too, and every backend
    prints the same."""
    path = DXDISPATCH / model
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout's shared folder")
    result = subprocess.run(
        [sys.executable, "-m", "dmlspec", "dispatch", str(path), "--backend", backend],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = dict(
        line.removeprefix("Resource ").split(": ", 1)
        for line in result.stdout.splitlines()
        if line.startswith("Resource ")
    )
    assert lines
    for resource, values in (printed or {}).items():
        assert lines[f"'{resource}'"] == values
