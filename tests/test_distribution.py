"""Conformance across machines, piece by piece: case lists, shards, baselines and merged reports
(dmlspec/conformance/caselist.py, shards.py, baseline.py, merge.py). The runs themselves are in
tests/test_distribution_runs.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dmlspec.conformance.baseline import (
    Baseline,
    BaselineEntry,
    BaselineError,
    baseline_from_results,
)
from dmlspec.conformance.caselist import (
    CaseListError,
    case_id,
    failed_cases,
    read_case_list,
    select_cases,
)
from dmlspec.conformance.merge import MergeError, merge_junit, merge_results, spec_digest
from dmlspec.conformance.shards import Shard, ShardError, assign, read_timings

from .conftest import REPO_ROOT

CASES = [
    *((f"test_gather_nd.py::test_support_cell[{i}]", "GATHER_ND") for i in range(7)),
    *((f"test_scatter_nd.py::test_strided_layout[{i}]", "SCATTER_ND") for i in range(5)),
    ("test_fill_value_sequence.py::test_random_valid_case", "FILL_VALUE_SEQUENCE"),
]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 20])
@pytest.mark.parametrize("timed", [False, True])
def test_shards_run_each_case_exactly_once(count: int, timed: bool) -> None:
    timings = {c: float(i % 4) for i, (c, _) in enumerate(CASES[::2])} if timed else None
    shards = [select_cases(CASES, None, Shard(k, count), timings) for k in range(1, count + 1)]
    assert sum(len(s) for s in shards) == len(CASES)
    assert set().union(*shards) == {c for c, _ in CASES}
    # The same cases in another order are the same shards (every machine collects them alike).
    assert shards == [
        select_cases(CASES[::-1], None, Shard(k, count), timings) for k in range(1, count + 1)
    ]


def test_without_timings_each_operator_is_dealt_over_the_shards() -> None:
    shards = assign(CASES, 3)
    for operator in ("GATHER_ND", "SCATTER_ND"):
        per_shard = [sum(1 for c, o in CASES if o == operator and shards[c] == k) for k in range(3)]
        assert max(per_shard) - min(per_shard) <= 1


def test_timings_balance_the_shards_by_time() -> None:
    slow = "test_fill_value_sequence.py::test_random_valid_case"
    timings = {slow: 30.0, **{c: 1.0 for c, _ in CASES if c != slow}}
    shards = assign(CASES, 2, timings)
    assert [c for c in shards if shards[c] == shards[slow]] == [slow]
    # A case the earlier run did not time costs its operator's mean: still the same split.
    del timings["test_gather_nd.py::test_support_cell[0]"]
    assert assign(CASES, 2, timings) == shards


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3/2", "--shard K/N needs 1 <= K <= N; got 3/2"),
        ("0/2", "--shard K/N needs 1 <= K <= N; got 0/2"),
        ("1-2", "--shard must be K/N (such as 2/4); got '1-2'"),
    ],
)
def test_a_malformed_shard_is_refused(text: str, message: str) -> None:
    with pytest.raises(ShardError) as error:
        Shard.parse(text)
    assert str(error.value) == message


def test_timings_are_read_from_an_earlier_run_s_junit_xml(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="test_gather_nd" '
        'name="test_support_cell[1_0-x]" time="2.5"/></testsuite></testsuites>'
    )
    assert read_timings(tmp_path) == {"test_gather_nd.py::test_support_cell[1_0-x]": 2.5}
    (tmp_path / "junit.xml").write_text("<testsuites>")
    with pytest.raises(ShardError, match="cannot read junit XML"):
        read_timings(tmp_path)


def test_case_ids_drop_the_folder_and_refuse_what_is_not_one(tmp_path: Path) -> None:
    assert case_id("generated/tests/test_a.py::test_b[1/2]") == "test_a.py::test_b[1/2]"
    assert case_id("test_a.py") is None
    listed = tmp_path / "cases.txt"
    listed.write_text("# a comment\n\ntest_a.py::test_b\ntest_a.py::test_b\nnot a case\n")
    with pytest.raises(CaseListError) as error:
        read_case_list(listed)
    assert str(error.value).startswith(f"--cases {listed}:5: expected a case id")
    listed.write_text("# a comment\n\ntest_a.py::test_b\ngenerated/tests/test_a.py::test_b\n")
    assert read_case_list(listed) == ("test_a.py::test_b",)


def test_a_listed_case_the_run_lacks_is_named() -> None:
    with pytest.raises(CaseListError, match=r"'test_gone\.py::test_x'"):
        select_cases(CASES, ("test_gone.py::test_x",), None)
    wanted = (CASES[0][0], CASES[-1][0])
    assert select_cases(CASES, wanted, None) == set(wanted)


def test_failed_cases_are_the_report_s_failures() -> None:
    results = {"tests": [_test("b", "failed"), _test("a", "failed"), _test("c", "passed")]}
    assert failed_cases(results) == ("test_x.py::a", "test_x.py::b")


def _test(name: str, outcome: str, **more: Any) -> dict[str, Any]:
    return {"nodeid": f"test_x.py::{name}", "outcome": outcome, "operator": "GATHER_ND", **more}


ENTRIES = Baseline(
    (
        BaselineEntry("test_support_cell[*FLOAT16]", 'half "floats"\n', "GATHER_ND", "onnx*"),
        BaselineEntry(
            "test_strided_layout[?added]", "strides", None, None, ("DmlExecutionProvider",)
        ),
    ),
    (BaselineEntry("test_random_valid_case", "timing out", "SCATTER_ND"),),
)


@pytest.mark.parametrize("name", ["baseline.json", "baseline.toml"])
def test_a_baseline_round_trips_through_its_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(ENTRIES.render(path))
    assert Baseline.read(path, {"GATHER_ND", "SCATTER_ND"}) == ENTRIES


def test_a_baseline_applies_per_backend_and_provider() -> None:
    cpu = ENTRIES.for_backend("onnxruntime", "CPUExecutionProvider")
    assert [e.pattern for e in cpu.expected_failures] == ["test_support_cell[*FLOAT16]"]
    dml = ENTRIES.for_backend("onnxruntime:DmlExecutionProvider", "DmlExecutionProvider")
    assert len(dml.expected_failures) == 2
    assert [e.pattern for e in ENTRIES.for_backend("jax", None).expected_failures] == []
    assert ENTRIES.for_backend("jax", None).flaky == ENTRIES.flaky


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"expected": []}', "unknown key 'expected' (allowed: about, expected_failures, flaky)"),
        ('{"flaky": {}}', "at /flaky: expected a list of entries; got {}"),
        ('{"flaky": [{"pattern": "x"}]}', "at /flaky/0/reason: required, a non-empty string"),
        (
            '{"expected_failures": [{"pattern": "x", "reason": "y", "operator": "NOPE"}]}',
            "at /expected_failures/0/operator: unknown operator 'NOPE'",
        ),
        ('{"flaky": [', "not valid JSON"),
    ],
)
def test_a_malformed_baseline_names_file_and_field(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(BaselineError) as error:
        Baseline.read(path, {"GATHER_ND"})
    assert str(error.value).startswith(f"--baseline {path}")
    assert message in str(error.value)


def test_a_baseline_is_written_from_a_run_s_failures_and_flakes() -> None:
    results = {
        "backend": "numpy",
        "expected_failures": [
            {"pattern": "p1", "reason": "built in", "source": "backend"},
            {"pattern": "p*", "reason": "listed", "source": "b.json", "operator": "GATHER_ND"},
        ],
        "tests": [
            _test("f", "failed", message="differs"),
            _test("g", "flaky", message="failed, then passed"),
            _test("p1", "xfailed", expected=0),
            _test("p2", "xfailed", expected=1),
            _test("ok", "passed"),
        ],
    }
    assert baseline_from_results(results) == Baseline(
        (
            BaselineEntry("f", "differs", "GATHER_ND", "numpy"),
            BaselineEntry("p*", "listed", "GATHER_ND", "numpy"),
        ),
        (BaselineEntry("g", "failed, then passed", "GATHER_ND", "numpy"),),
    )


def _report(shard: str | None, tests: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "spec": "sha256:1",
        "backend": "jax",
        "feature_level": "6_4",
        "profile": "ci",
        "shard": shard,
        "tests": tests,
        "cases": 2,
        "checks": 3,
        "coverage": {"cells": [{"operator": "G", "value": "F", "hits": len(tests) - 1}]},
        "layouts": {"layouts": [{"operator": "G", "layout": "padded", "hits": 1}]},
        "expected_failures": [],
        "stale": [],
        **more,
    }


def test_merged_results_add_up_the_shards() -> None:
    first = _report("1/2", [_test("a", "passed")])
    second = _report("2/2", [_test("b", "failed"), _test("c", "skipped")])
    merged = merge_results([(Path("two"), second), (Path("one"), first)])
    assert [t["nodeid"] for t in merged["tests"]] == [
        "test_x.py::a",
        "test_x.py::b",
        "test_x.py::c",
    ]
    assert (merged["cases"], merged["checks"], merged["shards"]) == (4, 6, ["1/2", "2/2"])
    assert merged["coverage"] == {
        "cells": [{"operator": "G", "value": "F", "hits": 1}],
        "total": 1,
        "hit": 1,
    }
    assert merged["layouts"]["layouts"][0]["hits"] == 2
    assert merged["missing_shards"] == []
    assert merge_results([(Path("one"), first)])["missing_shards"] == ["2/2"]


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("spec", "sha256:2", "specs"),
        ("backend", "numpy", "backends"),
        ("feature_level", "5_0", "feature levels"),
        ("profile", "thorough", "profiles"),
    ],
)
def test_reports_of_different_runs_are_not_merged(key: str, value: str, what: str) -> None:
    other = _report("2/2", [_test("b", "passed")], **{key: value})
    with pytest.raises(MergeError) as error:
        merge_results([(Path("one"), _report("1/2", [])), (Path("two"), other)])
    assert str(error.value).endswith(f"reports of different {what} cannot be merged")
    assert str(error.value).startswith(f"two/results.json has {key} '{value}'")


def test_a_case_in_two_reports_is_refused() -> None:
    twice = _report("1/2", [_test("a", "passed")])
    with pytest.raises(MergeError, match=r"case test_x.py::a is in both one and two"):
        merge_results([(Path("one"), twice), (Path("two"), twice)])


def test_an_expected_failure_is_stale_only_if_no_shard_saw_it_fail() -> None:
    def entry(matched: bool, stale: bool) -> dict[str, Any]:
        return {"pattern": "p", "reason": "r", "source": "b", "matched": matched, "stale": stale}

    def merged(*entries: dict[str, Any]) -> tuple[bool, bool]:
        reports = [
            (Path(f"r{i}"), _report(f"{i + 1}/{len(entries)}", [], expected_failures=[e]))
            for i, e in enumerate(entries)
        ]
        [result] = merge_results(reports)["expected_failures"]
        return result["matched"], result["stale"]

    assert merged(entry(True, True), entry(False, False)) == (True, True)
    assert merged(entry(True, True), entry(True, False)) == (True, False)
    assert merged(entry(False, False), entry(False, False)) == (False, False)


def test_merged_junit_holds_every_case_and_recounts(tmp_path: Path) -> None:
    for name, body in (("a", '<failure message="x"/>'), ("b", "<skipped/>")):
        (tmp_path / f"{name}.xml").write_text(
            f'<testsuites><testsuite name="pytest" tests="1"><testcase classname="test_x" '
            f'name="{name}" time="1.5">{body}</testcase></testsuite></testsuites>'
        )
    merged = merge_junit([tmp_path / "b.xml", tmp_path / "a.xml"])
    assert 'failures="1" skipped="1" tests="2" time="3.000"' in merged
    assert merged.index('name="a"') < merged.index('name="b"')


def test_the_spec_digest_ignores_line_ends(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b'{\n"x": 1}\n')
    unix = spec_digest(tmp_path)
    (tmp_path / "a.json").write_bytes(b'{\r\n"x": 1}\r\n')
    assert spec_digest(tmp_path) == unix
    (tmp_path / "a.json").write_bytes(b'{\n"x": 2}\n')
    assert spec_digest(tmp_path) != unix


def test_merge_reports_refuses_different_backends_in_one_line(tmp_path: Path) -> None:
    for name, backend in (("one", "jax"), ("two", "numpy")):
        (tmp_path / name).mkdir()
        report = _report(None, [_test(name, "passed")], backend=backend)
        (tmp_path / name / "results.json").write_text(json.dumps(report))
    folders = [str(tmp_path / "one"), str(tmp_path / "two")]
    result = subprocess.run(
        [sys.executable, "-m", "dmlspec", "merge-reports", str(tmp_path / "out"), *folders],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "reports of different backends cannot be merged" in result.stderr


@pytest.mark.parametrize("name", ["github-actions-shards.yml", "gitlab-parallel-shards.yml"])
def test_the_example_ci_workflows_run_commands_dmlspec_accepts(name: str) -> None:
    import shlex

    import yaml

    from dmlspec.cli import build_parser

    text = (REPO_ROOT / "docs" / "ci" / name).read_text()
    yaml.safe_load(text)
    variables = {
        "${{ matrix.shard }}": "2",
        "$CI_NODE_INDEX": "2",
        "$CI_NODE_TOTAL": "4",
        "report-*": "report-1 report-2",
    }
    for old, new in variables.items():
        text = text.replace(old, new)
    commands = [
        " ".join(line.split())
        for line in re.findall(
            r"(dmlspec (?:conformance|merge-reports)[^\n]*(?:\n\s+--[^\n]*)*)", text
        )
    ]
    assert any("--shard 2/4" in c or '--shard "2/4"' in c for c in commands)
    assert any(c.startswith("dmlspec merge-reports") for c in commands)
    for command in commands:
        args = build_parser().parse_args(shlex.split(command)[1:])
        if args.command == "conformance":
            assert str(Shard.parse(args.shard)) == "2/4"
            assert Baseline.read(REPO_ROOT / args.baseline) == Baseline()
