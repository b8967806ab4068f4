"""The conformance suites themselves: they catch broken backends, accept correct ones that
resolve undefined cases differently, report expected failures, and cover every cell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dmlspec import load_catalog
from dmlspec.cli import share_accelerator

from .conftest import REPO_ROOT
from .sweeps import sweep


def conformance(backend: str, report: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "dmlspec",
            "conformance",
            "--backend",
            backend,
            "--report",
            str(report),
            *options,
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=900,
        # Under pytest-xdist the run is not a worker of this session: its own workers get these.
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")},
    )


def workers() -> str:
    """`--workers` for a test's own conformance run: 2, or when pytest itself runs on xdist
    workers, the cores left to each of them (at least 1), so the runs of two tests at once do
    not oversubscribe the machine."""
    pytest_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return str(max(1, min(2, (os.cpu_count() or 2) // pytest_workers)))


SEEDS = ("SCATTER_ND", "GATHER_ND", "SCATTER_ELEMENTS", "FILL_VALUE_SEQUENCE")
BROKEN = [  # the first two (one semantic, one strided) in the default suite: tests/sweeps.py
    ("ScatterNDOffByOne", "SCATTER_ND"),
    ("IgnoresInputStrides", "GATHER_ND"),
    ("NegativeIndicesClamped", "SCATTER_ELEMENTS"),
    ("GatherNDReversedTuples", "GATHER_ND"),
    ("FillAccumulates", "FILL_VALUE_SEQUENCE"),
    ("FillSaturates", "FILL_VALUE_SEQUENCE"),
    ("ScatterElementsAlongLastAxis", "SCATTER_ELEMENTS"),
    ("Float16AsFloat32", "GATHER_ND"),
    ("CrashesOnInt8", "SCATTER_ND"),
    ("WritesOutputGaps", "SCATTER_ND"),
    ("MishandlesZeroStrides", "SCATTER_ELEMENTS"),
]
STRIDED = {"IgnoresInputStrides", "WritesOutputGaps", "MishandlesZeroStrides"}


@pytest.mark.parametrize(("backend", "operator"), sweep(BROKEN, [b for b, _ in BROKEN], kept=2))
def test_ci_profile_catches_a_broken_backend(tmp_path: Path, backend: str, operator: str) -> None:
    result = conformance(f"tests.broken_backends:{backend}", tmp_path, "--ops", operator)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failures = [t for t in results["tests"] if t["outcome"] == "failed"]
    assert failures, "the run failed without a failing test"
    assert (tmp_path / "junit.xml").exists() and (tmp_path / "report.md").exists()
    if backend in STRIDED:  # packed cases pass: only the strided tests catch these bugs
        assert {t["test"] for t in failures} <= {"test_strided_layout", "test_random_strided_case"}


def test_negative_tests_catch_a_backend_that_validates_nothing(tmp_path: Path) -> None:
    result = conformance("tests.broken_backends:AcceptsAnything", tmp_path, "--ops", "GATHER_ND")
    assert result.returncode == 1
    failed = {
        t["test"]
        for t in json.loads((tmp_path / "results.json").read_text())["tests"]
        if t["outcome"] == "failed"
    }
    assert failed == {"test_rejects_desc_breaking", "test_rejects_strided_desc_breaking"}


@pytest.mark.slow  # a whole suite on a correct backend; the jax run below stays by default
def test_a_correct_backend_resolving_overlaps_differently_passes(tmp_path: Path) -> None:
    result = conformance(
        "tests.broken_backends:FirstWriteWins", tmp_path, "--ops", "SCATTER", "SCATTER_ND"
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_expected_failures_are_reported_and_stale_ones_named(tmp_path: Path) -> None:
    result = conformance(
        "tests.broken_backends:DocumentsItsDivergence", tmp_path, "--ops", "FILL_VALUE_SEQUENCE"
    )
    assert result.returncode == 0, result.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = {t["nodeid"].split("::")[-1]: t["outcome"] for t in results["tests"]}
    assert outcomes["test_support_cell[5_0-OutputTensor-data_type-FLOAT16]"] == "xfailed"
    assert any(node.startswith("test_documented_example") for node in results["stale"]) or any(
        o == "xpassed" for n, o in outcomes.items() if n.startswith("test_documented_example")
    )
    report = (tmp_path / "report.md").read_text()
    assert "returns float32 for FLOAT16" in report
    assert "## Stale expected failures" in report


def test_jax_passes_and_hits_every_support_cell_in_the_ci_profile(tmp_path: Path) -> None:
    # The seed operators (the element-wise family: tests/test_element_wise_family.py)
    result = conformance("jax", tmp_path, "--workers", workers(), "--ops", *SEEDS)
    assert result.returncode == 0, result.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    coverage = results["coverage"]
    assert coverage["hit"] == coverage["total"] == 484
    assert not [t for t in results["tests"] if t["outcome"] == "failed"]
    header = next(line for line in result.stdout.splitlines() if line.startswith("family"))
    assert header.split()[:3] == ["family", "verdict", "passed"]
    assert "support cells hit 484/484" in result.stdout
    # Counted across both workers: every passed test judged at least one case, and support
    # cells share the cases that exercise them (dmlspec.conformance.plan), run once a worker.
    passed = [t for t in results["tests"] if t["outcome"] == "passed"]
    assert results["checks"] >= len(passed) > results["cases"]
    assert f"{results['cases']} cases run in " in result.stdout
    assert f" cases/s), judging {results['checks']} checks" in result.stdout
    # Each support-cell test is filed under its case's output data type.
    cells = [t for t in passed if t["test"] == "test_support_cell"]
    assert all(t["data_type"] != "-" for t in cells)
    outputs = [t for t in cells if t["kind"] == "data_type" and t["tensor"] == "OutputTensor"]
    assert outputs and all(t["data_type"] == t["value"] for t in outputs)


@pytest.mark.slow  # whole suites on correct backends; the jax run above stays in the default suite
def test_numpy_and_onnxruntime_pass(tmp_path: Path) -> None:
    pytest.importorskip(
        "onnxruntime", reason="the peers extra (onnx, onnxruntime) is not installed"
    )
    for backend in ("numpy", "onnxruntime"):
        result = conformance(backend, tmp_path / backend, "--ops", *SEEDS)
        assert result.returncode == 0, (backend, result.stdout[-3000:])


def test_backends_load_from_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from dmlspec import backends

    point = EntryPoint("mine", "tests.broken_backends:FirstWriteWins", backends.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        backends,
        "entry_points",
        lambda group: [point] if group == backends.ENTRY_POINT_GROUP else [],
    )
    assert backends.load_backend("mine").name == "numpy"
    monkeypatch.setenv(backends.ENVIRONMENT_VARIABLE, "mine")
    assert type(backends.load_backend()).__name__ == "FirstWriteWins"


def test_feature_level_may_lower_but_not_raise_the_backend_claim(tmp_path: Path) -> None:
    backend = "tests.declining_backends:ClaimsFive"
    raised = conformance(backend, tmp_path, "--feature-level", "6_0", "--ops", "GATHER_ND")
    assert raised.returncode != 0
    assert (
        "feature-level 6_0 is above what claims-5_0 claims (5_0)" in raised.stdout + raised.stderr
    )
    lowered = conformance(
        "jax", tmp_path / "lowered", "--feature-level", "2_1", "--ops", "GATHER_ND"
    )
    assert lowered.returncode == 0, lowered.stdout[-2000:]
    results = json.loads((tmp_path / "lowered" / "results.json").read_text())
    assert results["feature_level"] == "2_1"
    boundary = [
        t for t in results["tests"] if t["test"] == "test_rejects_cell_above_the_backend_level"
    ]
    assert boundary and all(t["outcome"] == "passed" for t in boundary)


@pytest.mark.parametrize(
    ("data_type", "start", "delta"),
    [
        ("UINT64", 2**64 - 5, 3),
        ("INT64", 2**64 + 3, -2),
        ("INT8", 127, 1),
        ("UINT32", 2**32 - 2, 1),
    ],
)
def test_onnxruntime_fill_wraps_64_bit_values_like_the_reference(
    data_type: str, start: int, delta: int
) -> None:
    pytest.importorskip("onnxruntime")
    from dmlspec import reference
    from dmlspec.backends import load_backend

    operator = {
        "type": "DML_OPERATOR_FILL_VALUE_SEQUENCE",
        "desc": {
            "ValueDataType": data_type,
            "ValueStart": start,
            "ValueDelta": delta,
            "OutputTensor": {"DataType": data_type, "Sizes": [5]},
        },
    }
    expected = reference.run(operator, {})["OutputTensor"]
    actual = load_backend("onnxruntime").run(operator, {})["OutputTensor"]
    assert actual.dtype == expected.dtype and actual.tolist() == expected.tolist()


def test_every_documented_example_runs_on_the_reference(tmp_path: Path) -> None:
    # Examples give scalar fields in the page's notation (Axes {0, 1}, HasExclusiveSum FALSE);
    # the suites once passed those strings on, found the examples valid at no level, and
    # skipped 37 of them. Every example with a printed output must now run and pass.
    catalog = load_catalog()
    expected = [example.id for spec in catalog.with_kernels for example in spec.checked_examples]
    suites = REPO_ROOT / "generated" / "tests"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", str(suites), "--rootdir", str(suites), "-q"),
            *("-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=", "--dml-backend=numpy"),
            *("-k", "test_documented_example", f"--junitxml={tmp_path / 'junit.xml'}"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")},
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert f"{len(expected)} passed" in result.stdout, result.stdout[-1000:]


def test_a_run_s_processes_share_an_accelerator_unless_the_user_chose() -> None:
    """Each process of a run (the backend's, xdist's workers) starts a JAX client; on a GPU,
    JAX's preallocation would give the first 75% of the memory and fail the second."""
    environ: dict[str, str] = {}
    share_accelerator(environ)
    assert environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    chosen = {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
    share_accelerator(chosen)
    assert chosen == {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
