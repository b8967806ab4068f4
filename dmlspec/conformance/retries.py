"""Retries and flakes: `--retries N` runs a failed case again, up to N more times; a case that
passes on a retry is flaky, never passed. A known flake (a baseline's `flaky` entry) that fails
every time is flaky too: reported with its reason, failing nothing.

Both are recorded on the case's call report as the user property `dml_flaky` (what failed
first, how many runs), which results.json turns into the outcome "flaky" and junit.xml keeps
as a property.
"""

from __future__ import annotations

import json

import pytest
from _pytest.runner import runtestprotocol

__all__ = ["FLAKY", "run_with_retries"]

FLAKY = "dml_flaky"


def run_with_retries(
    item: pytest.Item, nextitem: pytest.Item | None, retries: int, known_flake: str | None
) -> None:
    """Run `item` as pytest would, again while it fails and retries are left, and log the
    reports of its last run."""
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    first_failure = ""
    runs = 0
    while True:
        runs += 1
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        failed = [r for r in reports if r.failed]
        if not failed or runs > retries:
            break
        first_failure = first_failure or _message(failed[0])
    call = next((r for r in reports if r.when == "call"), None)
    if call is not None and runs > 1 and not failed:
        _mark(call, f"failed, then passed on run {runs}: {first_failure}", runs)
    elif call is not None and known_flake is not None and failed == [call]:
        _mark(call, f"known flake ({known_flake}), failed {runs} run(s): {_message(call)}", runs)
        call.outcome = "skipped"
        call.wasxfail = f"known flake: {known_flake}"
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _mark(report: pytest.TestReport, message: str, runs: int) -> None:
    report.user_properties.append((FLAKY, json.dumps({"message": message[:500], "runs": runs})))


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    said = str(crash.message if crash is not None else report.longrepr or "")
    return (said.splitlines() or [""])[0][:300]
