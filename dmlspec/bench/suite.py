"""Conformance-suite throughput: `dmlspec conformance` run as a user runs it, timed whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["suite_throughput"]


def suite_throughput(
    backend: str = "jax",
    profile: str = "ci",
    ops: list[str] | None = None,
    cold: bool = False,
    workers: str | None = None,
    cache: str | None = None,
) -> dict[str, Any]:
    """Wall time and cases per second of `dmlspec conformance --backend B --profile P`
    (`--workers N` when given: issue 15's target is 100 cases/s on 2 cores, `workers="2"`,
    counted as checks: cases judged, a support cell judged by a case another cell's test ran).
    `cold` runs it with an empty JAX compilation cache (a first run on a new machine); else
    with `cache` as $DMLSPEC_JAX_CACHE (None: dmlspec's default folder), whatever this
    process set (the benchmark turns the cache off for its kernel timings)."""
    with tempfile.TemporaryDirectory(prefix="dmlspec-bench-") as scratch:
        report = Path(scratch) / "report"
        command = [sys.executable, "-m", "dmlspec", "conformance", "--backend", backend]
        command += ["--profile", profile]
        if workers:
            command += ["--workers", workers]
        if ops:
            command += ["--ops", *ops]
        shown = " ".join(["dmlspec", *command[3:]])  # the report folder is a scratch one
        command += ["--report", str(report)]
        environment = dict(os.environ)
        if cold:
            environment["DMLSPEC_JAX_CACHE"] = str(Path(scratch) / "jax-cache")
        elif cache is None:
            environment.pop("DMLSPEC_JAX_CACHE", None)
        else:
            environment["DMLSPEC_JAX_CACHE"] = cache
        start = time.perf_counter()
        finished = subprocess.run(
            command, capture_output=True, text=True, env=environment, check=False
        )
        wall = time.perf_counter() - start
        results_file = report / "results.json"
        if not results_file.is_file():
            tail = (finished.stdout + finished.stderr).strip().splitlines()[-5:]
            return {"command": command, "error": "no results.json", "output_tail": tail}
        results = json.loads(results_file.read_text())
    outcomes = Counter(test["outcome"] for test in results["tests"])
    cases = int(results.get("cases", 0))  # every case the backend was given
    # Every case judged: a case run once judges each support cell it exercises.
    checks = int(results.get("checks", cases))
    return {
        "command": shown,
        "compilation_cache": "empty (cold)" if cold else "the user's (warm after a first run)",
        "exit_code": finished.returncode,
        "wall_seconds": wall,
        "tests": sum(outcomes.values()),
        "cases": cases,
        "outcomes": dict(sorted(outcomes.items())),
        "checks": checks,
        "cases_per_second": cases / wall if wall else 0.0,
        "checks_per_second": checks / wall if wall else 0.0,
        "coverage": f"{results['coverage']['hit']}/{results['coverage']['total']} cells",
    }
