"""Conformance across machines, end to end through `dmlspec conformance`: two shards merged are
the unsharded run, `--list` then `--cases` reproduces a run, a baseline written from a broken
backend's run makes its next run pass, and retries report flakes as flaky."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT
from .test_conformance import conformance

# Whole conformance runs, several per test: the slow set (CI runs it). The pieces (sharding,
# merging, baselines, retries) have unit tests in test_distribution.py.
pytestmark = pytest.mark.slow

OPERATOR = "FILL_VALUE_SEQUENCE"


def verdicts(folder: Path) -> dict[str, str]:
    return {t["nodeid"]: t["outcome"] for t in results(folder)["tests"]}


def results(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return loaded


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("unsharded")
    result = conformance("jax", folder, "--ops", OPERATOR)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return folder


def test_two_shards_merged_are_the_unsharded_run(unsharded: Path, tmp_path: Path) -> None:
    for k in (1, 2):
        result = conformance("jax", tmp_path / f"shard{k}", "--ops", OPERATOR, "--shard", f"{k}/2")
        assert result.returncode == 0, result.stderr[-2000:]
    shards = [verdicts(tmp_path / f"shard{k}") for k in (1, 2)]
    assert shards[0] and shards[1] and not set(shards[0]) & set(shards[1])
    shard_dirs = [str(tmp_path / "shard2"), str(tmp_path / "shard1")]
    merged = subprocess.run(
        [sys.executable, "-m", "dmlspec", "merge-reports", str(tmp_path / "merged"), *shard_dirs],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert merged.returncode == 0, merged.stderr
    assert "shards 1/2, 2/2" in merged.stdout
    assert verdicts(tmp_path / "merged") == verdicts(unsharded)
    whole, combined = results(unsharded), results(tmp_path / "merged")
    for table in ("coverage", "layouts"):
        assert (combined[table]["hit"], combined[table]["total"]) == (
            whole[table]["hit"],
            whole[table]["total"],
        )
    junit = (tmp_path / "merged" / "junit.xml").read_text()
    assert junit.count("<testcase ") == len(verdicts(unsharded))
    report = (tmp_path / "merged" / "report.md").read_text()
    assert report.startswith("# Conformance of `jax`")


def test_list_then_cases_reproduces_a_run(unsharded: Path, tmp_path: Path) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "dmlspec", "conformance", "--list", "--ops", OPERATOR],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.splitlines()) == sorted(verdicts(unsharded))
    (tmp_path / "cases.txt").write_text(listed.stdout)
    # No --ops: the case list alone says what runs.
    result = conformance("jax", tmp_path / "run", "--cases", str(tmp_path / "cases.txt"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert verdicts(tmp_path / "run") == verdicts(unsharded)


def test_a_written_baseline_makes_a_broken_backend_pass(tmp_path: Path) -> None:
    broken = "tests.broken_backends:FillAccumulates"
    baseline = tmp_path / "baseline.toml"
    first = conformance(
        broken, tmp_path / "first", "--ops", OPERATOR, "--write-baseline", str(baseline)
    )
    assert first.returncode == 1
    failed = {n for n, o in verdicts(tmp_path / "first").items() if o == "failed"}
    assert failed and f"{len(failed)} expected failures" in first.stdout

    second = conformance(
        broken, tmp_path / "second", "--ops", OPERATOR, "--baseline", str(baseline)
    )
    assert second.returncode == 0, second.stdout[-2000:]
    outcomes = verdicts(tmp_path / "second")
    assert {n for n, o in outcomes.items() if o == "xfailed"} == failed
    assert "failed" not in outcomes.values()
    listed = results(tmp_path / "second")["expected_failures"]
    assert len(listed) == len(failed)
    assert all(e["source"] == str(baseline) and e["matched"] for e in listed)
    assert "## Expected failures" in (tmp_path / "second" / "report.md").read_text()

    # The same baseline on a correct backend: every entry is stale, and said to be.
    third = conformance("numpy", tmp_path / "third", "--ops", OPERATOR, "--baseline", str(baseline))
    assert third.returncode == 0
    assert all(e["stale"] for e in results(tmp_path / "third")["expected_failures"])

    # --rerun-failed runs the first run's failures, and only them.
    rerun = conformance(broken, tmp_path / "rerun", "--rerun-failed", str(tmp_path / "first"))
    assert rerun.returncode == 1
    assert set(verdicts(tmp_path / "rerun")) == failed


def test_a_case_passing_on_a_retry_is_flaky_never_passed(tmp_path: Path) -> None:
    flaky = "tests.broken_backends:FailsItsFirstFill"
    plain = conformance(flaky, tmp_path / "plain", "--ops", OPERATOR)
    assert plain.returncode == 1
    [failed] = [n for n, o in verdicts(tmp_path / "plain").items() if o == "failed"]

    retried = conformance(flaky, tmp_path / "retried", "--ops", OPERATOR, "--retries", "1")
    assert retried.returncode == 0, retried.stdout[-2000:]
    outcomes = verdicts(tmp_path / "retried")
    assert outcomes[failed] == "flaky"
    assert list(outcomes.values()).count("flaky") == 1
    assert f"flaky: {failed}: failed, then passed on run 2" in retried.stdout
    report = (tmp_path / "retried" / "report.md").read_text()
    assert f"## Flaky\n\n- `{failed}`: failed, then passed on run 2" in report

    # A known flake fails nothing even without a retry.
    baseline = tmp_path / "flakes.json"
    baseline.write_text(
        json.dumps({"flaky": [{"pattern": failed.split("::")[1], "reason": "first fill"}]})
    )
    known = conformance(flaky, tmp_path / "known", "--ops", OPERATOR, "--baseline", str(baseline))
    assert known.returncode == 0, known.stdout[-2000:]
    assert verdicts(tmp_path / "known")[failed] == "flaky"
