"""pytest plugin of the generated conformance suites (registered as a pytest11 entry point).

Options: --dml-backend NAME|module:attr (default $DMLSPEC_BACKEND, else jax),
--dml-feature-level FL (may lower, never raise, what the backend claims), --dml-ops OP,...
(run only these operators), --dml-report DIR (results.json with every test's outcome and the
support-cell coverage), --dml-case-timeout SECONDS (default $DMLSPEC_CASE_TIMEOUT, else 60),
--dml-in-process (run the backend in the test process: no time limit, no crash protection),
--dml-cases FILE, --dml-shard K/N, --dml-timings JUNIT_XML, --dml-baseline FILE, --dml-retries N
(case lists, shards, baselines and retries: caselist.py, shards.py, baseline.py, retries.py).
Hypothesis profiles: ci, dev, thorough (--hypothesis-profile).

The backend runs in a child process (see isolation.py): a case that crashes it, ends it or
runs past the time limit fails, naming why; the run goes on.

A backend may list expected failures as `expected_failures`: a path to a JSON file, or a list,
of {"pattern": <test id pattern, * and ? as wildcards>, "reason": ..., optionally "operator":
<spec name>, limiting the entry to that operator's suite}. Matching tests are
marked xfail; the report lists them with their reasons, and entries that no longer fail as
stale.
xdist workers send their coverage to the controller, which merges it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from ..safeio import write_file
from .baseline import Baseline
from .baseline import matches as _matches
from .merge import spec_digest
from .shards import Shard
from .suite import Target, catalog

# `ci` does not shrink a failing example: its seed's neighbours are other random cases, not
# simpler ones, and shrinking ran hundreds of them (15 s for one broken backend's strided test).
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

_RESULTS = pytest.StashKey[list[dict[str, Any]]]()
_EXPECTED = pytest.StashKey[list[dict[str, Any]]]()
_TARGET = pytest.StashKey[Target]()
_STARTING = pytest.StashKey[Callable[[], Any]]()  # the backend's process, started early
_KNOWN_FLAKE = pytest.StashKey[str]()  # on an item: the reason a baseline gives for its flakes


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dmlspec", "DirectML conformance suites")
    group.addoption("--dml-backend", help="backend: jax, numpy, onnxruntime or module:attr")
    group.addoption("--dml-feature-level", help="test at this level (at most the backend's)")
    group.addoption("--dml-ops", help="comma-separated operators to run (default: all)")
    group.addoption("--dml-report", help="folder for results.json")
    group.addoption("--dml-case-timeout", type=float, help="seconds a backend may take per case")
    group.addoption(
        "--dml-in-process",
        action="store_true",
        help="run the backend in this process (no per-case time limit, no crash protection)",
    )
    group.addoption("--dml-cases", help="run only the case ids this file lists, one a line")
    group.addoption("--dml-shard", help="K/N: run shard K of N (each case in exactly one shard)")
    group.addoption("--dml-timings", help="an earlier run's junit.xml to balance the shards by")
    group.addoption("--dml-baseline", help="expected failures and known flakes (JSON or TOML)")
    group.addoption("--dml-retries", type=int, default=0, help="run a failed case again N times")


_PRELOADED: dict[str, Any] = {}  # the backend the CLI opened and checked, by its name


def open_backend(name: str | None, case_timeout: float | None, in_process: bool) -> Any:
    """The backend under test, in its own process unless `in_process`.

    Raises BackendLoadError (one line) when it cannot be loaded or breaks the contract."""
    from ..backends import ENVIRONMENT_VARIABLE, load_backend
    from .isolation import IsolatedBackend

    chosen = name or os.environ.get(ENVIRONMENT_VARIABLE) or "jax"
    if chosen in _PRELOADED:
        return _PRELOADED[chosen]
    return load_backend(chosen) if in_process else IsolatedBackend(chosen, case_timeout)


def preload(name: str, backend: Any) -> None:
    """Have sessions use `backend` for `--dml-backend name` (the CLI checks it first);
    `preload("", None)` forgets it."""
    _PRELOADED.clear()
    if backend is not None:
        _PRELOADED[name] = backend


def expected_failures(backend: Any) -> list[dict[str, Any]]:
    """The backend's expected failures, read and checked; BackendLoadError when malformed."""
    from ..backends import BackendLoadError
    from ..jsonio import JsonReadError, read_json_file
    from ..limits import quote

    listed = getattr(backend, "expected_failures", None)
    if listed is None:
        return []
    where = f"backend {quote(backend.name)}: expected_failures"
    if isinstance(listed, str | Path):
        try:
            data = read_json_file(Path(listed))
        except JsonReadError as error:
            raise BackendLoadError(f"{where} file {listed}: {error}") from None
        listed = data.get("expected_failures") if isinstance(data, dict) else None
        where = f"{where} file {quote(str(getattr(backend, 'expected_failures', '')))}"
    if not isinstance(listed, list | tuple) or not all(
        isinstance(e, dict)
        and isinstance(e.get("pattern"), str)
        and isinstance(e.get("reason"), str)
        and isinstance(e.get("operator", ""), str)
        for e in listed
    ):
        raise BackendLoadError(
            f'{where} must be a list of {{"pattern": ..., "reason": ..., optionally '
            f'"operator": ...}} (or a JSON file holding one under "expected_failures"); '
            f"got {quote(listed)}"
        )
    return [dict(e) for e in listed]


def pytest_configure(config: pytest.Config) -> None:
    _started[:] = [time.monotonic()]
    _session_results.clear()
    config.stash[_RESULTS] = []
    _worker_cells.clear()
    _worker_layouts.clear()
    _worker_cases[:] = [0, 0]
    config.stash[_EXPECTED] = []
    _start_backend(config)


def _start_backend(config: pytest.Config) -> None:
    """A session that runs the suites on a `--dml-backend` (each xdist worker of one) starts
    the backend's process now, while it collects the suites, and waits for it when first
    needed; not an xdist controller (its workers run the tests), nor a backend the command
    line opened."""
    from .isolation import IsolatedBackend

    name = config.getoption("dml_backend")
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(
        config, "workerinput"
    )
    if not name or config.getoption("dml_in_process") or name in _PRELOADED or controller:
        return
    config.stash[_STARTING] = IsolatedBackend.starting(name, config.getoption("dml_case_timeout"))


def _target(config: pytest.Config) -> Target:
    if _TARGET not in config.stash:
        from ..backends import BackendLoadError

        try:
            starting = config.stash.get(_STARTING, None)
            backend = (
                starting()
                if starting is not None
                else open_backend(
                    config.getoption("dml_backend"),
                    config.getoption("dml_case_timeout"),
                    config.getoption("dml_in_process"),
                )
            )
        except BackendLoadError as error:
            raise pytest.UsageError(str(error)) from None
        claimed = str(backend.feature_level).removeprefix("DML_FEATURE_LEVEL_")
        level = claimed
        requested = config.getoption("dml_feature_level")
        if requested:
            requested = requested.removeprefix("DML_FEATURE_LEVEL_")
            common = catalog().common
            if common.feature_level(requested).rank > common.feature_level(claimed).rank:
                raise pytest.UsageError(
                    f"--dml-feature-level {requested} is above what {backend.name} claims "
                    f"({claimed})"
                )
            level = requested
            with contextlib.suppress(AttributeError):  # a validating backend checks at that level
                backend.feature_level = level
        config.stash[_TARGET] = Target(backend, level)
    return config.stash[_TARGET]


@pytest.fixture(scope="session")
def dml(request: pytest.FixtureRequest) -> Target:
    """The backend under test and its feature level."""
    return _target(request.config)


def _expected_failures(config: pytest.Config) -> list[dict[str, Any]]:
    """The backend's expected failures (source "backend"), then the baseline's that apply to
    it (source: the file), in the same order in every process: a result names its entry by
    its index here."""
    from ..backends import BackendLoadError

    if not config.getoption("dml_backend") and not os.environ.get("DMLSPEC_BACKEND"):
        return []
    try:
        backend = _target(config).backend
        entries = [dict(e, source="backend") for e in expected_failures(backend)]
    except BackendLoadError as error:
        raise pytest.UsageError(str(error)) from None
    baseline = _baseline(config)
    return entries + [dict(e.to_json(), source=baseline.source) for e in baseline.expected_failures]


def _baseline(config: pytest.Config) -> Baseline:
    """The `--dml-baseline` entries that apply to the backend under test."""
    from .baseline import BaselineError

    path = config.getoption("dml_baseline")
    if not path:
        return Baseline()
    try:
        baseline = Baseline.read(Path(path))
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from None
    backend = _target(config).backend
    provider = getattr(getattr(backend, "provider", None), "name", None)
    return baseline.for_backend(str(backend.name), provider)


def _select_cases(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the cases `--dml-cases` lists and `--dml-shard` gives this shard."""
    from .caselist import CaseListError, case_id, read_case_list, select_cases
    from .shards import Shard, ShardError, read_timings

    listed, shard, timings = (config.getoption(f"dml_{o}") for o in ("cases", "shard", "timings"))
    if not listed and not shard:
        return
    try:
        ids = {item.nodeid: case_id(item.nodeid) or item.nodeid for item in items}
        kept = select_cases(
            [(ids[item.nodeid], _operator_of(item) or "") for item in items],
            read_case_list(Path(listed)) if listed else None,
            Shard.parse(shard) if shard else None,
            read_timings(Path(timings)) if timings else None,
        )
    except (CaseListError, ShardError) as error:
        raise pytest.UsageError(str(error)) from None
    _keep_items(config, items, lambda item: ids[item.nodeid] in kept)


def _keep(
    config: pytest.Config, items: list[pytest.Item], wanted: Callable[[str | None], bool]
) -> None:
    """Keep the items whose operator is `wanted`, deselecting the others, in one pass (a
    catalog run collects some 12500 items: `item not in kept` made it quadratic)."""
    _keep_items(config, items, lambda item: wanted(_operator_of(item)))


def _keep_items(
    config: pytest.Config, items: list[pytest.Item], wanted: Callable[[pytest.Item], bool]
) -> None:
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (kept if wanted(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    operators = config.getoption("dml_ops")
    if not operators:  # a default run leaves out the suites the specs mark in progress
        unfinished = {
            s.name for s in catalog().with_kernels if s.checked_kernel.in_progress is not None
        }
        _keep(config, items, lambda operator: operator not in unfinished)
    if operators:
        wanted = {o.strip().upper().removeprefix("DML_OPERATOR_") for o in operators.split(",")}
        wanted = {catalog().operator(o).name for o in wanted}
        _keep(config, items, lambda operator: operator in wanted or operator is None)
    _select_cases(config, items)
    if config.option.collectonly:  # --list: the ids are all it needs, not the backend
        return
    expected = [dict(e, used=False) for e in _expected_failures(config)] if items else []
    config.stash[_EXPECTED] = expected
    flakes = _baseline(config).flaky if items else ()
    for item in items:
        operator = _operator_of(item)
        if operator is None:
            continue
        params = getattr(item, "callspec", None)
        values = dict(params.params) if params else {}
        meta: dict[str, Any] = {
            "operator": operator,
            "test": getattr(item, "originalname", item.name),
            # pytest's placeholder for an empty parameter set is no value
            **{k: str(v) for k, v in values.items() if type(v).__name__ != "NotSetType"},
        }
        test_id = item.nodeid.split("::", 1)[-1]
        for index, entry in enumerate(expected):
            if entry.get("operator", operator) == operator and _matches(entry["pattern"], test_id):
                entry["used"] = True
                meta["expected"] = index
                item.add_marker(pytest.mark.xfail(reason=entry["reason"], strict=False))
                break
        item.user_properties.append(("dml", json.dumps(meta)))
        for flake in flakes:
            if flake.operator in (None, operator) and _matches(flake.pattern, test_id):
                item.stash[_KNOWN_FLAKE] = flake.reason
                break


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """A case runs again while it fails and `--dml-retries` are left (retries.py)."""
    retries = item.config.getoption("dml_retries") or 0
    flake = item.stash.get(_KNOWN_FLAKE, None)
    if _operator_of(item) is None or (retries <= 0 and flake is None):
        return None
    from .retries import run_with_retries

    run_with_retries(item, nextitem, max(retries, 0), flake)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and _TARGET in item.config.stash:
        target = item.config.stash[_TARGET]
        if target.last_case is not None:
            report.user_properties.append(("dml_case", json.dumps(target.last_case)))
            target.last_case = None
    return report


def _operator_of(item: pytest.Item) -> str | None:
    """The operator a generated suite module tests (its OPERATOR), None for other tests."""
    operator = getattr(getattr(item, "module", None), "OPERATOR", None)
    return operator if isinstance(operator, str) else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    meta = dict(report.user_properties).get("dml")
    if meta is None:
        return
    outcome: str = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    flaky = dict(report.user_properties).get("dml_flaky")
    if flaky is not None:
        outcome = "flaky"
    message = case_text = ""
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)  # the exception's own message
        said = str(crash.message if crash is not None else report.longrepr or "")
        message = (said.splitlines() or [""])[0][:500]
        case_text = said.partition("\n--- case ---\n")[2][:8000]  # to rerun it (check.py)
    elif report.skipped and isinstance(report.longrepr, tuple):
        message = str(report.longrepr[2])[:300]
    if flaky is not None:
        message = str(json.loads(str(flaky))["message"])
    case = json.loads(str(dict(report.user_properties).get("dml_case", "{}")))
    _session_results.append(
        {
            "nodeid": report.nodeid,
            "outcome": outcome,
            "message": message,
            **({"case": case_text} if case_text else {}),
            **json.loads(str(meta)),
            **case,
        }
    )


# One pytest session per process: its results, and the coverage xdist workers sent.
_session_results: list[dict[str, Any]] = []
_worker_cells: Counter[tuple[str, ...]] = Counter()
_worker_layouts: Counter[tuple[str, ...]] = Counter()
_worker_cases = [0, 0]  # cases xdist workers ran, and checks (suite.Target)
_started = [0.0]  # when the session started (time.monotonic), for cases per second


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    cells: Counter[tuple[str, ...]] = Counter()
    layouts: Counter[tuple[str, ...]] = Counter()
    cases = checks = 0
    if _TARGET in config.stash:
        cells.update(config.stash[_TARGET].cells)
        layouts.update(config.stash[_TARGET].layouts)
        cases, checks = config.stash[_TARGET].cases, config.stash[_TARGET].checks
    if hasattr(config, "workerinput"):  # an xdist worker: hand the coverage to the controller
        config.workeroutput["dml_cells"] = [[*cell, count] for cell, count in cells.items()]  # type: ignore[attr-defined]
        config.workeroutput["dml_layouts"] = [[*use, n] for use, n in layouts.items()]  # type: ignore[attr-defined]
        config.workeroutput["dml_cases"] = cases  # type: ignore[attr-defined]
        config.workeroutput["dml_checks"] = checks  # type: ignore[attr-defined]
        return
    cells.update(_worker_cells)
    layouts.update(_worker_layouts)
    report_dir = config.getoption("dml_report")
    if report_dir and _session_results:
        counts = (cases + _worker_cases[0], checks + _worker_cases[1])
        _write_results(config, Path(report_dir), cells, counts, layouts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: merge a worker's coverage."""
    output = getattr(node, "workeroutput", {})
    for *cell, count in output.get("dml_cells", []):
        _worker_cells[tuple(cell)] += count
    for *use, count in output.get("dml_layouts", []):
        _worker_layouts[tuple(use)] += count
    _worker_cases[0] += output.get("dml_cases", 0)
    _worker_cases[1] += output.get("dml_checks", 0)


def coverage_table(
    level: str, operators: set[str], cells: Counter[tuple[str, ...]]
) -> dict[str, Any]:
    """Every support cell up to `level` for these operators, with how often it was hit."""
    common = catalog().common
    rank = common.feature_level(level).rank
    rows = []
    for spec in catalog().operators:
        if spec.name not in operators:
            continue
        seen: set[tuple[str, ...]] = set()
        for row in spec.support:
            if common.feature_level(row.feature_level).rank > rank:
                continue
            for cell in row.tensors:
                keys = [("data_type", t) for t in cell.data_types] + [
                    ("rank", str(n)) for n in cell.dimension_counts
                ]
                for kind, value in keys:
                    key = (spec.name, row.feature_level, cell.tensor, kind, value)
                    if key in seen:  # the same cell in another `when` group (REDUCE)
                        continue
                    seen.add(key)
                    rows.append(
                        {
                            "operator": spec.name,
                            "level": row.feature_level,
                            "tensor": cell.tensor,
                            "kind": kind,
                            "value": value,
                            "hits": cells.get(key, 0),
                        }
                    )
    return {"cells": rows, "total": len(rows), "hit": sum(1 for r in rows if r["hits"])}


def layout_table(operators: set[str], layouts: Counter[tuple[str, ...]]) -> dict[str, Any]:
    """Every (operator, tensor, layout) the common spec allows, with how often it ran."""
    rows = []
    for spec in catalog().operators:
        if spec.name not in operators:
            continue
        for tensor in spec.tensor_fields:
            kind = "OUTPUT" if tensor.is_output else "INPUT"
            for layout in catalog().common.tensor_layouts:
                if kind in layout.tensor_kinds:
                    key = (spec.name, tensor.name, layout.name)
                    rows.append(
                        {
                            "operator": spec.name,
                            "tensor": tensor.name,
                            "layout": layout.name,
                            "hits": layouts.get(key, 0),
                        }
                    )
    return {"layouts": rows, "total": len(rows), "hit": sum(1 for r in rows if r["hits"])}


def _write_results(
    config: pytest.Config,
    folder: Path,
    cells: Counter[tuple[str, ...]],
    counts: tuple[int, int],  # cases run, checks
    layouts: Counter[tuple[str, ...]],
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    target = _target(config)
    operators = {r["operator"] for r in _session_results}
    stale = sorted({r["nodeid"] for r in _session_results if r["outcome"] == "xpassed"})
    shard = config.getoption("dml_shard")
    payload = {
        "backend": target.backend.name,
        # what chose it (module:attr, onnxruntime:PROVIDER, ...): the rerun commands name it
        "backend_option": config.getoption("dml_backend")
        or os.environ.get("DMLSPEC_BACKEND")
        or target.backend.name,
        "feature_level": target.feature_level,
        "profile": config.getoption("hypothesis_profile", None) or "default",
        "spec": spec_digest(),
        "shard": str(Shard.parse(shard)) if shard else None,
        "tests": _session_results,
        "cases": counts[0],
        "checks": counts[1],
        "seconds": round(time.monotonic() - _started[0], 1),
        "coverage": coverage_table(target.feature_level, operators, cells),
        "layouts": layout_table(operators, layouts),
        # entries of operators this run left out are not this run's business
        "expected_failures": [
            verdict
            for verdict in _entry_verdicts(_expected_failures(config), _session_results)
            if verdict.get("operator") in (None, *operators)
        ],
        "stale": stale,
    }
    text = json.dumps(payload, indent=2, sort_keys=True) + "\n"
    write_file(folder, "results.json", text.encode())


def _entry_verdicts(
    entries: list[dict[str, Any]], results: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each expected failure with whether it matched a test and, if every test it matched now
    passes, that it is stale. Judged from the results, which xdist workers send here."""
    outcomes: dict[int, list[str]] = {}
    for result in results:
        if isinstance(result.get("expected"), int):
            outcomes.setdefault(result["expected"], []).append(result["outcome"])
    return [
        {
            "pattern": e["pattern"],
            "reason": e["reason"],
            "source": e["source"],
            **({"operator": e["operator"]} if "operator" in e else {}),
            "matched": i in outcomes,
            "stale": i in outcomes and all(o == "xpassed" for o in outcomes[i]),
        }
        for i, e in enumerate(entries)
    ]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not _session_results or hasattr(config, "workerinput"):
        return
    cells: Counter[tuple[str, ...]] = Counter(_worker_cells)
    layouts: Counter[tuple[str, ...]] = Counter(_worker_layouts)
    if _TARGET in config.stash:
        cells.update(config.stash[_TARGET].cells)
        layouts.update(config.stash[_TARGET].layouts)
    target = _target(config)
    operators = {r["operator"] for r in _session_results}
    table = coverage_table(target.feature_level, operators, cells)
    layout_hits = layout_table(operators, layouts)
    write = terminalreporter.write_line
    write(
        f"dmlspec: {target.backend.name} at feature level {target.feature_level}: "
        f"support cells hit {table['hit']}/{table['total']}, "
        f"tensor layouts hit {layout_hits['hit']}/{layout_hits['total']}"
    )
    for row in table["cells"]:
        if not row["hits"]:
            cell = " ".join(str(row[k]) for k in ("operator", "level", "tensor", "kind", "value"))
            write(f"  not hit: {cell}")
    for entry in config.stash[_EXPECTED]:
        if entry.get("operator") not in (None, *operators):
            continue  # an operator this run left out: not this run's business
        operator = f"{entry['operator']} " if entry.get("operator") else ""
        write(
            f"  expected failure {operator}{entry['pattern']}: {entry['reason']}"
            + ("" if entry["used"] else " (matches no test)")
        )
    for result in _session_results:
        if result["outcome"] == "xpassed":
            write(f"  stale expected failure (now passes): {result['nodeid']}")
        elif result["outcome"] == "flaky":
            write(f"  flaky: {result['nodeid']}: {result['message']}")
