"""The benchmark (scripts/bench.py) runs end to end at a tiny scale, checks every variant's
output, and reports what the issue asks for. Its numbers are not tested: timings belong to
the benchmark, never to unit tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dmlspec.bench.cases import build_cases
from dmlspec.bench.targets import TARGETS
from dmlspec.bench.timing import Variant, time_variants

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_runs_and_writes_its_json(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--scale", "0.002"]
    command += ["--runs", "2", "--warmup", "0", "--suite", "none", "--json", str(output)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "copy bandwidth" in finished.stdout and "targets" in finished.stdout
    results = json.loads(output.read_text())
    assert results["copy_bandwidth_gbps"] > 0
    names = {case["name"] for case in results["cases"]}
    assert names == set(build_cases())
    for case in results["cases"]:
        libraries = {v["library"] for v in case["variants"]}
        assert {"dmlspec", "numpy"} <= libraries
        for variant in case["variants"]:
            assert variant["rounds"] == 2 and variant["median_seconds"] > 0
            if variant["library"] != "jax":  # the trivial call has no output to check
                assert variant["correct"] is True, (case["name"], variant["name"])
    assert len(results["targets"]) == len(TARGETS)
    for entry in results["targets"]:
        assert entry["met"] in (True, False, None)
        assert entry["met"] is not False or entry["evidence"]


def test_every_case_has_a_64_bit_a_float16_a_large_and_a_small_form() -> None:
    names = set(build_cases())
    for operator in ("scatter_nd", "gather_nd", "scatter_elements", "fill_value_sequence"):
        assert f"{operator}_large" in names and f"{operator}_small" in names
    assert any(n.endswith("_int64") for n in names) and any(n.endswith("_float16") for n in names)


def test_a_variant_with_a_wrong_output_is_flagged() -> None:
    expected = np.arange(4, dtype=np.float32)
    right = Variant("right", "test", "new output", lambda: expected.copy(), 16)
    wrong = Variant("wrong", "test", "new output", lambda: expected[::-1].copy(), 16)
    widened = Variant("widened", "test", "new output", lambda: expected.astype(np.float64), 16)
    timings = time_variants([right, wrong, widened], rounds=2, warmup=0, expected=expected)
    assert [t.correct for t in timings] == [True, False, False]
    assert all(len(t.seconds) == 2 for t in timings)


def test_unknown_case_is_refused() -> None:
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--cases", "nope"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 2
    assert "unknown cases ['nope']" in finished.stderr
    assert "Traceback" not in finished.stderr


@pytest.mark.parametrize("runs", ["0", "-1"])
def test_bad_run_counts_are_refused(runs: str) -> None:
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--runs", runs]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 2 and "--runs must be at least 1" in finished.stderr


def test_packed_comparison_times_both_revisions(tmp_path: Path) -> None:
    output = tmp_path / "packed.json"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--packed-against", "HEAD"]
    command += ["--packed-only", "--packed-processes", "1", "--runs", "1", "--json", str(output)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "after/before" in finished.stdout
    rows = json.loads(output.read_text())["packed"]["rows"]
    assert {"gather_nd small", "ops.run gather_nd small"} <= {r["call"] for r in rows}
    assert all(r["before_seconds"] > 0 and r["after_seconds"] > 0 for r in rows)
