"""Hostile input and faulty backends, tried on every command as an attacker would.

Each attack runs the CLI in its own process under a 4 GiB address-space limit and a timeout,
in a scratch folder beside a victim file and a folder of secrets, and asserts the documented
exit code, a one-line message on stderr (for exit 2), no traceback and no internal error,
bounded output, time and memory, and that nothing was written outside the folder the
command may write to.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import InvalidOperator, SpecError, Unsupported, load_catalog, ops
from dmlspec.conformance.isolation import BackendCrashed, CaseTimeout, IsolatedBackend
from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT, SPEC_DIR

MEMORY_LIMIT = 4 << 30
SECONDS = 30.0  # what any single attack may take, startup included, on a busy 2-core runner
ROOT = os.geteuid() == 0


# The child limits its own address space before it imports anything, then runs the CLI: the
# same as a preexec_fn, without running Python code between fork and exec in this (JAX,
# multithreaded) process.
_LAUNCH = (
    "import resource, runpy, sys; "
    "resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1]))); "
    "sys.argv = ['dmlspec', *sys.argv[2:]]; "
    "runpy.run_module('dmlspec', run_name='__main__', alter_sys=True)"
)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float


def _snapshot(root: Path, skip: Path | None) -> dict[str, tuple[int, int, str]]:
    """Every entry under `root` (links not followed), but `skip`'s contents."""
    seen = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):  # its entries are listed themselves
            seen[str(path.relative_to(root))] = (0, 0, "folder")
            continue
        target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else ""
        seen[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, target)
    return seen


class Arena:
    """A scratch folder to attack from: `work` (the current folder and the attack's files),
    `victim` (a file nothing may touch) and `secrets/` (files nothing may read out)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.work.mkdir()
        self.victim = root / "victim.txt"
        self.victim.write_text("precious\n")
        (root / "secrets").mkdir()
        self.secret = root / "secrets" / "key.npy"
        np.save(self.secret, np.arange(4, dtype=np.int32))

    def file(self, name: str, content: str | bytes | Any) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(json.dumps(content))
        return path

    def run(
        self,
        *args: str,
        writes: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = SECONDS,
        isolate: bool = True,
    ) -> Outcome:
        """Run `dmlspec args` from `work`; check that only `writes` (if given) changed.

        An attack on memory or time runs in a process of its own under the limits; one that
        only needs a clear message may run in this process (`isolate=False`: faster)."""
        before = _snapshot(self.root, writes)
        started = time.monotonic()
        if not isolate:
            assert env is None
            outcome = _in_process(list(args), self.work)
        else:
            outcome = self._subprocess(list(args), env, timeout)
        outcome.seconds = time.monotonic() - started
        assert _snapshot(self.root, writes) == before, "something was written outside"
        assert self.victim.read_text() == "precious\n"
        return outcome

    def _subprocess(self, args: list[str], env: dict[str, str] | None, timeout: float) -> Outcome:
        result = subprocess.run(
            [sys.executable, "-c", _LAUNCH, str(MEMORY_LIMIT), *args],
            capture_output=True,
            text=True,
            errors="replace",
            cwd=self.work,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
            timeout=timeout,
        )
        return Outcome(result.returncode, result.stdout, result.stderr, 0.0)


def _in_process(args: list[str], cwd: Path) -> Outcome:
    from dmlspec.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(args)
    finally:
        os.chdir(previous)
    return Outcome(code, stdout.getvalue(), stderr.getvalue(), 0.0)


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    return Arena(tmp_path)


def expect(
    outcome: Outcome, code: int, *said: str, output_limit: int = 20_000, seconds: float = SECONDS
) -> None:
    """The documented exit code, one line on stderr for errors, no traceback or internal
    error, what must be said, and bounded output and time."""
    everything = outcome.stdout + outcome.stderr
    assert outcome.code == code, everything[-3000:]
    assert "Traceback" not in everything and "internal error" not in everything, everything[-3000:]
    assert "INTERNALERROR" not in everything
    lines = outcome.stderr.splitlines()
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("dmlspec: "), outcome.stderr[-3000:]
    for text in said:
        assert text in everything, everything[-3000:]
    assert len(everything) < output_limit, f"{len(everything)} characters of output"
    assert outcome.seconds < seconds


def _fill(**desc: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "ValueDataType": "INT32",
        "ValueStart": 0,
        "ValueDelta": 1,
        "OutputTensor": {"DataType": "INT32", "Sizes": [4]},
    }
    return {"type": "DML_OPERATOR_FILL_VALUE_SEQUENCE", "desc": {**base, **desc}}


# -- validate ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "said"),
    [
        pytest.param(
            json.dumps(_fill(OutputTensor={"DataType": "INT32", "Sizes": [2] * 300_000})),
            1,
            "OutputTensor.Sizes may have at most 64 entries",
            id="sizes-300000-entries",
        ),
        pytest.param("[" * 100_000 + "]" * 100_000, 2, "nested more than 200 deep", id="deep"),
        pytest.param(json.dumps(_fill(ValueStart=float("nan"))), 1, "finite", id="nan-start"),
        pytest.param(
            json.dumps(_fill(ValueDelta=float("inf"))), 1, "ValueDelta must be a finite", id="inf"
        ),
        pytest.param(
            json.dumps(_fill()).replace('"ValueStart": 0', '"ValueStart": 1e400'),
            1,
            "got inf",
            id="1e400-start",
        ),
        pytest.param(
            json.dumps({"type": "X" * 50_000_000, "desc": {}}),
            1,
            "(50000000 characters)",
            id="50MB-type-echo",
        ),
        pytest.param(
            json.dumps({"type": "FILL_VALUE_SEQUENCE", "desc": {"k" * 10**6: 1}}),
            1,
            "characters)",
            id="1MB-key-echo",
        ),
        pytest.param(b"\xff\xfe{}", 2, "not UTF-8", id="invalid-utf8"),
        pytest.param("1" * 5_000, 2, "invalid JSON: Exceeds the limit", id="5000-digit-integer"),
        pytest.param("", 2, "invalid JSON", id="empty"),
        pytest.param(
            json.dumps({"dispatchables": [1, 2]}), 2, "/dispatchables must be", id="model-list"
        ),
    ],
)
def test_validate_rejects_hostile_files(
    arena: Arena, request: pytest.FixtureRequest, text: str | bytes, code: int, said: str
) -> None:
    path = arena.file("operator.json", text)
    isolate = _heavy(request)
    expect(arena.run("validate", str(path), isolate=isolate), code, said, seconds=15)


# Attacks on memory or time: in a process of their own under the limits. The others only
# need the right message, and run in this process (each subprocess costs a Python start).
HEAVY = {
    "sizes-300000-entries",
    "deep",
    "50MB-type-echo",
    "count-1e12",
    "count-2**70",
    "huge-sizes",
    "sparse-64GiB",
    "fifo",
    "link-to-dev-zero",
}


def _heavy(request: pytest.FixtureRequest) -> bool:
    return str(request.node.callspec.id) in HEAVY


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-to-dev-zero", "folder"])
def test_validate_reads_only_regular_files(arena: Arena, kind: str) -> None:
    path = arena.work / "operator.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    said = {"fifo": "is a FIFO", "folder": "is a folder"}.get(kind, "is a character device")
    expect(arena.run("validate", str(path)), 2, said, seconds=10)


def test_validate_refuses_a_file_over_the_size_limit(arena: Arena) -> None:
    path = arena.file("operator.json", json.dumps(_fill()) + " " * 2000)
    outcome = arena.run("validate", str(path), env={"DMLSPEC_MAX_FILE_BYTES": "1000"})
    expect(outcome, 2, "over the limit of 1000", "DMLSPEC_MAX_FILE_BYTES")
    outcome = arena.run("validate", str(path), env={"DMLSPEC_MAX_FILE_BYTES": "many"})
    expect(outcome, 2, "DMLSPEC_MAX_FILE_BYTES must be a positive number")


# -- check-docs -------------------------------------------------------------------------------


@pytest.fixture
def docs(arena: Arena, shared_dir: Path) -> Path:
    """A copy of the DirectML docs folder (files linked, not copied) to plant things in."""
    copy = arena.work / "docs"
    for part in ("reference", "seeds"):
        for source in sorted((shared_dir / part).rglob("*")):
            target = copy / source.relative_to(shared_dir)
            if source.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(source)
    return copy


def _page(docs: Path, operator: str, index: int = 0) -> Path:
    spec = load_catalog(SPEC_DIR).operator(operator)
    return docs / spec.doc_pages[index].path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "invalid-utf8", "quadratic-spans"])
def test_check_docs_survives_hostile_pages(arena: Arena, docs: Path, kind: str) -> None:
    page = _page(docs, "SCATTER_ND")
    page.unlink()
    if kind == "fifo":
        os.mkfifo(page)
    elif kind == "dev-zero":
        page.symlink_to("/dev/zero")
    elif kind == "invalid-utf8":
        page.write_bytes(b"# title\n\xff\xfe\n")
    else:  # a 1 MB line of translated spans that never close as a pair
        page.write_text('<span class="sxs-lookup">' + '<span data-ttu-id="1">x' * 40_000 + "\n")
    said = {
        "fifo": "is a FIFO",
        "dev-zero": "is a character device",
        "invalid-utf8": "UTF-8",
        "quadratic-spans": "SCATTER_ND",
    }[kind]
    expect(arena.run("check-docs", str(docs)), 1, said, output_limit=200_000, seconds=20)


# -- dispatch ---------------------------------------------------------------------------------


def _resource_model(initial: Any, data_type: str = "INT32") -> dict[str, Any]:
    return {
        "resources": {"r": {"initialValuesDataType": data_type, "initialValues": initial}},
        "commands": [{"type": "print", "resource": "r"}],
    }


def _fill_model(sizes: Any) -> dict[str, Any]:
    return {
        "resources": {
            "out": {
                "initialValuesDataType": "INT32",
                "initialValues": {"valueCount": 4, "value": 0},
            }
        },
        "dispatchables": {"f": _fill(OutputTensor={"DataType": "INT32", "Sizes": sizes})},
        "commands": [
            {"type": "dispatch", "dispatchable": "f", "bindings": {"OutputTensor": "out"}},
            {"type": "print", "resource": "out"},
        ],
    }


@pytest.mark.parametrize(
    ("model", "said"),
    [
        pytest.param(
            _resource_model({"valueCount": 10**12, "value": 0}), "over the limit", id="count-1e12"
        ),
        pytest.param(
            _resource_model({"valueCount": 2**70, "value": 0}), "over the limit", id="count-2**70"
        ),
        pytest.param(
            _resource_model({"valueCount": True, "value": 0}), "positive integer", id="count-true"
        ),
        pytest.param(
            _resource_model({"valueCount": -3, "value": 0}), "positive integer", id="count-neg"
        ),
        pytest.param(_resource_model([2**70]), "outside the range of int32", id="int-2**70"),
        pytest.param(_resource_model([float("nan")]), "int32 values are integers", id="int-nan"),
        pytest.param(
            _resource_model({"valueCount": 8, "value": float("nan")}),
            "int32 values are integers; got nan",
            id="fill-int32-with-nan",
        ),
        pytest.param(
            _resource_model({"valueCount": 8, "valueStart": float("inf"), "valueDelta": 1}),
            "int32 values are integers",
            id="sequence-inf",
        ),
        pytest.param(_resource_model(["x" * 10**6]), "characters)", id="string-echo"),
        pytest.param(
            {"commands": [{"type": "print", "resource": ["r"]}]},
            "/commands/0/resource: no resource ['r']",
            id="unhashable-resource",
        ),
        pytest.param(
            {"commands": [{"type": "dispatch", "dispatchable": {}, "bindings": {}}]},
            "/commands/0/dispatchable: no dispatchable {}",
            id="unhashable-dispatchable",
        ),
        pytest.param(_fill_model([-1]), "invalid operator", id="negative-sizes"),
        pytest.param(_fill_model(["4"]), "invalid operator", id="string-sizes"),
        pytest.param(_fill_model([2**40, 2**40]), "invalid operator", id="huge-sizes"),
    ],
)
def test_dispatch_checks_before_allocating(
    arena: Arena, request: pytest.FixtureRequest, model: Any, said: str
) -> None:
    path = arena.file("model.json", model)
    outcome = arena.run("dispatch", str(path), "--backend", "numpy", isolate=_heavy(request))
    expect(outcome, 2, said, seconds=15)


def test_dispatch_rejects_1e400_for_an_integer_type(arena: Arena) -> None:
    path = arena.file("model.json", json.dumps(_resource_model([1])).replace("[1]", "[1e400]"))
    outcome = arena.run("dispatch", str(path), isolate=False)
    expect(outcome, 2, "int32 values are integers; got inf")


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(64 << 30)  # 64 GiB that take no disk


@pytest.mark.parametrize(
    ("name", "plant", "said"),
    [
        ("data.npy", lambda p: np.save(p, np.array([object()]), allow_pickle=True), "pickle"),
        ("data.npy", lambda p: p.write_bytes(b"\x93NUMPY garbage"), "not a .npy array"),
        ("data.npy", lambda p: p.write_bytes(b""), "not a .npy array"),
        ("data.bin", _sparse, "over the limit"),
        ("data.bin", lambda p: p.write_bytes(b"12345"), "not a whole number of int32"),
        ("data.bin", os.mkfifo, "is a FIFO"),
        ("data.bin", lambda p: p.symlink_to("/dev/zero"), "leaves the model's folder"),
    ],
    ids=["pickled", "corrupt", "empty", "sparse-64GiB", "ragged", "fifo", "link-to-dev-zero"],
)
def test_dispatch_reads_resource_files_safely(
    arena: Arena, request: pytest.FixtureRequest, name: str, plant: Callable[[Path], Any], said: str
) -> None:
    plant(arena.work / name)
    path = arena.file("model.json", _resource_model({"sourcePath": name}))
    outcome = arena.run("dispatch", str(path), "--backend", "numpy", isolate=_heavy(request))
    expect(outcome, 2, said, seconds=15)


def test_dispatch_will_not_follow_a_link_out_of_its_folder(arena: Arena) -> None:
    (arena.work / "key.npy").symlink_to(arena.secret)
    path = arena.file("model.json", _resource_model({"sourcePath": "key.npy"}))
    outcome = arena.run("dispatch", str(path), "--backend", "numpy", isolate=False)
    expect(outcome, 2, "leaves the model's folder (use --allow-any-path to allow it)")
    allowed = arena.run(
        "dispatch", str(path), "--backend", "numpy", "--allow-any-path", isolate=False
    )
    expect(allowed, 0, "Resource 'r': 0, 1, 2, 3")


@pytest.mark.parametrize(
    ("backend", "said"),
    [
        ("no-such-backend", "unknown backend 'no-such-backend'"),
        ("tests.hostile_backends:RaisesHuge", "raised KeyError"),
        ("tests.hostile_backends:ReturnsGarbage", "no array of numbers for OutputTensor"),
    ],
)
def test_dispatch_reports_backend_failures_in_one_line(
    arena: Arena, backend: str, said: str
) -> None:
    path = arena.file("model.json", _fill_model([4]))
    expect(arena.run("dispatch", str(path), "--backend", backend, isolate=False), 2, said)


# -- export -----------------------------------------------------------------------------------


def test_export_replaces_planted_links_and_never_writes_through_them(arena: Arena) -> None:
    out = arena.work / "out"
    case = out / "fill_value_sequence-example-example_1_1d_ascending_step"
    case.mkdir(parents=True)
    (out / "manifest.json").symlink_to(arena.victim)
    (case / "model.json").symlink_to(arena.victim)
    outcome = arena.run(
        "export",
        "--out",
        str(out),
        "--ops",
        "FILL_VALUE_SEQUENCE",
        "--format",
        "dxdispatch",
        writes=out,
    )
    expect(outcome, 0, "exported")
    assert not (out / "manifest.json").is_symlink() and not (case / "model.json").is_symlink()
    assert json.loads((out / "manifest.json").read_text())["cases"]


def test_export_refuses_a_linked_case_folder(arena: Arena) -> None:
    out = arena.work / "out"
    out.mkdir()
    elsewhere = arena.root / "secrets"
    (out / "fill_value_sequence-example-example_1_1d_ascending_step").symlink_to(elsewhere)
    outcome = arena.run(
        "export",
        "--out",
        str(out),
        "--ops",
        "FILL_VALUE_SEQUENCE",
        "--format",
        "dxdispatch",
        writes=out,
    )
    expect(outcome, 2, "is a symbolic link; refusing to write through it")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["key.npy"]


@pytest.mark.parametrize("kind", ["onto-a-file", "under-a-file", "read-only", "unknown-op"])
def test_export_reports_unwritable_places_and_unknown_ops(arena: Arena, kind: str) -> None:
    if kind == "read-only" and ROOT:
        pytest.skip("root writes into read-only folders")
    target = arena.work / "out"
    options = ["--ops", "FILL_VALUE_SEQUENCE"]
    if kind == "onto-a-file":
        target.write_text("a file")
    elif kind == "under-a-file":
        (arena.work / "file").write_text("a file")
        target = arena.work / "file" / "out"
    elif kind == "read-only":
        target.mkdir()
        target.chmod(0o500)
    else:
        options = ["--ops", "NO_SUCH_OP" * 1000]
    said = {
        "onto-a-file": "exists and is not a folder",
        "under-a-file": "cannot write there",
        "read-only": "Permission denied",
        "unknown-op": "--ops: unknown operator",
    }[kind]
    try:
        expect(arena.run("export", "--out", str(target), *options, isolate=False), 2, said)
    finally:
        if kind == "read-only":
            target.chmod(0o700)


# -- run-vectors ------------------------------------------------------------------------------

GATHER = {
    "type": "DML_OPERATOR_GATHER_ND",
    "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": [2, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
        "InputDimensionCount": 2,
        "IndicesDimensionCount": 2,
    },
}


def _vectors(root: Path, case_id: str = "g", expected: str = "expected_OutputTensor.npy") -> Path:
    """A one-case vector folder as export writes it."""
    folder = root / "vectors"
    case = folder / "g"
    case.mkdir(parents=True)
    np.save(case / "InputTensor.npy", np.array([[1, 2], [3, 4]], np.float32))
    np.save(case / "IndicesTensor.npy", np.array([[1], [0]], np.uint32))
    np.save(case / "expected_OutputTensor.npy", np.array([[3, 4], [1, 2]], np.float32))
    names = ("InputTensor", "IndicesTensor", "OutputTensor")
    model = {
        "dispatchables": {"operator": GATHER},
        "commands": [
            {"type": "dispatch", "dispatchable": "operator", "bindings": {n: n for n in names}}
        ],
    }
    (case / "model.json").write_text(json.dumps(model))
    manifest = {
        "cases": [
            {
                "id": case_id,
                "feature_level": "6_4",
                "outputs": {"OutputTensor": {"expected": expected, "rule": "exact"}},
            }
        ]
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_run_vectors_passes_a_sound_folder(arena: Arena) -> None:
    folder = _vectors(arena.work)
    expect(arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False), 0, "passed")


@pytest.mark.parametrize(
    ("case_id", "expected", "said"),
    [
        ("../../secrets", "expected_OutputTensor.npy", "case id '../../secrets' leaves"),
        ("/etc", "expected_OutputTensor.npy", "case id '/etc' leaves"),
        ("g", "../../../secrets/key.npy", "expected '../../../secrets/key.npy' leaves"),
        ("g", "/dev/zero", "expected '/dev/zero' leaves its case folder"),
    ],
    ids=["dotdot-id", "absolute-id", "dotdot-expected", "absolute-expected"],
)
def test_run_vectors_stays_inside_its_folder(
    arena: Arena, case_id: str, expected: str, said: str
) -> None:
    folder = _vectors(arena.work, case_id, expected)
    outcome = arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False)
    expect(outcome, 2, said, "--allow-any-path")


def test_run_vectors_refuses_a_linked_input_unless_allowed(arena: Arena) -> None:
    folder = _vectors(arena.work)
    linked = folder / "g" / "IndicesTensor.npy"
    outside = arena.root / "secrets" / "indices.npy"
    shutil.move(linked, outside)
    linked.symlink_to(outside)
    outcome = arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False)
    expect(outcome, 2, "input 'IndicesTensor.npy' leaves its case folder")
    allowed = arena.run(
        "run-vectors", str(folder), "--backend", "numpy", "--allow-any-path", isolate=False
    )
    expect(allowed, 0, "1 passed")


def _edit_manifest(folder: Path, edit: Callable[[dict[str, Any]], Any]) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda m: m.update(cases=7), "manifest.json at /cases must be an array; got 7"),
        (lambda m: m["cases"].append("x"), "/cases/1/id must be a string"),
        (lambda m: m["cases"][0].pop("id"), "/cases/0/id must be a string; got None"),
        (lambda m: m["cases"][0].update(outputs=[]), "/cases/0/outputs must be an object"),
        (lambda m: m["cases"][0].update(feature_level="9_9"), "unknown feature level '9_9'"),
        (
            lambda m: m["cases"][0]["outputs"]["OutputTensor"].update(rule="close"),
            "rule must be exact or ulp",
        ),
        (
            lambda m: m["cases"][0]["outputs"]["OutputTensor"].update(
                colliding_writes={"999": ["0"]}
            ),
            "colliding_writes/'999' must map a cell below 4",
        ),
        (lambda m: m["cases"][0]["outputs"].update(Nope={}), "'Nope' is no tensor of the desc"),
        (
            lambda m: m["cases"][0]["outputs"]["OutputTensor"].update(
                rule="ulp", max_ulps=1, ulp_scale="bogus"
            ),
            "ulp_scale 'bogus' is none of GATHER_ND's comparison rules",
        ),
    ],
    ids=[
        "cases-int",
        "case-str",
        "no-id",
        "outputs-list",
        "level",
        "rule",
        "cell",
        "output",
        "ulp-scale",
    ],
)
def test_run_vectors_reports_malformed_manifests(
    arena: Arena, edit: Callable[[dict[str, Any]], Any], said: str
) -> None:
    folder = _vectors(arena.work)
    _edit_manifest(folder, edit)
    expect(arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False), 2, said)


@pytest.mark.parametrize(
    ("name", "array", "said"),
    [
        (
            "IndicesTensor.npy",
            np.array([[1], [0]], np.float32),
            "must be UINT32 (uint32) of shape [2, 1] as its desc says; the file holds float32",
        ),
        ("expected_OutputTensor.npy", np.zeros((4,), np.float32), "holds float32[4]"),
        ("InputTensor.npy", np.array([object()]), "without pickle"),
    ],
    ids=["float-indices", "expected-shape", "pickled"],
)
def test_run_vectors_checks_stored_arrays_against_the_desc(
    arena: Arena, name: str, array: np.ndarray, said: str
) -> None:
    folder = _vectors(arena.work)
    np.save(folder / "g" / name, array, allow_pickle=True)
    expect(arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False), 2, said)


@pytest.mark.parametrize("kind", ["fifo", "not-json", "deep"])
def test_run_vectors_reads_its_manifest_safely(arena: Arena, kind: str) -> None:
    folder = _vectors(arena.work)
    manifest = folder / "manifest.json"
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
        # is_file() is False for a FIFO: it is "no manifest.json", still one line, exit 2
        said = "no manifest.json"
    elif kind == "not-json":
        manifest.write_text("{")
        said = "invalid JSON"
    else:
        manifest.write_text('{"cases": ' + "[" * 50_000 + "]" * 50_000 + "}")
        said = "nested more than"
    expect(arena.run("run-vectors", str(folder), "--backend", "numpy"), 2, said)


# -- conformance ------------------------------------------------------------------------------


def test_a_crashing_exiting_or_hanging_backend_fails_the_run_naming_each_case(
    arena: Arena,
) -> None:
    report = arena.work / "report"
    outcome = arena.run(
        "conformance",
        "--backend",
        "tests.hostile_backends:Misbehaves",
        "--ops",
        "FILL_VALUE_SEQUENCE",
        "--report",
        str(report),
        "--case-timeout",
        "0.5",
        writes=report,
        env={"MISBEHAVE_MARKERS": str(report / "markers")},  # each fault once
        timeout=120,
    )
    expect(outcome, 1, "misbehaves", output_limit=200_000, seconds=120)
    results = json.loads((report / "results.json").read_text())
    failed = [t for t in results["tests"] if t["outcome"] == "failed"]
    reasons = sorted(t["message"].split("this case")[-1] for t in failed)
    assert reasons == sorted(
        [
            ": its process exited with code 0",
            ": its process was killed by SIGKILL",
            " within 0.5 s (the per-case limit: --case-timeout or DMLSPEC_CASE_TIMEOUT); its "
            "process was killed",
        ]
    ), reasons
    for test in failed:  # each named, in the output and the report
        assert test["nodeid"].split("::")[-1] in outcome.stdout
        assert test["nodeid"] in (report / "report.md").read_text()
    assert sum(t["outcome"] == "passed" for t in results["tests"]) > 40  # the run went on


@pytest.mark.parametrize(
    ("backend", "options", "said"),
    [
        ("no_such_module:Backend", (), "cannot load backend 'no_such_module:Backend'"),
        ("os:system", (), "lacks name, feature_level, run"),
        ("tests.hostile_backends:NoName", (), "lacks name"),
        ("tests.hostile_backends:RaisingConstructor", (), "RuntimeError: no device here"),
        ("tests.hostile_backends:NonsenseLevel", (), "feature_level must be one of"),
        ("tests.hostile_backends:GarbageExpectedFailures", (), "expected_failures must be a list"),
        ("tests.hostile_backends:ExitsWhileLoading", (), "did not start: its process exited"),
        ("numpy", ("--ops", "NOPE"), "--ops: unknown operator 'NOPE'"),
        ("numpy", ("--case-timeout", "-1"), "--case-timeout must be a positive number"),
        ("numpy", ("--feature-level", "banana"), "unknown level 'banana'"),
    ],
    ids=[
        "missing-module",
        "os-system",
        "no-name",
        "raising-constructor",
        "nonsense-level",
        "garbage-expected-failures",
        "exits-while-loading",
        "unknown-op",
        "timeout",
        "level",
    ],
)
def test_conformance_reports_a_broken_backend_in_one_line(
    arena: Arena, backend: str, options: tuple[str, ...], said: str
) -> None:
    report = arena.work / "report"
    outcome = arena.run(
        "conformance", "--backend", backend, "--report", str(report), *options, writes=report
    )
    expect(outcome, 2, said, output_limit=2_000)


@pytest.mark.parametrize("kind", ["under-a-file", "onto-a-file"])
def test_conformance_report_somewhere_unwritable(arena: Arena, kind: str) -> None:
    (arena.work / "file").write_text("a file")
    report = arena.work / "file" / "report" if kind == "under-a-file" else arena.work / "file"
    outcome = arena.run("conformance", "--backend", "numpy", "--report", str(report))
    expect(outcome, 2, "--report")


# -- The backend in its own process, directly ---------------------------------------------


def test_an_isolated_backend_turns_each_fault_into_that_case_s_exception() -> None:
    operator = _fill()
    cases: list[tuple[str, type[Exception], str]] = [
        ("ExitsAlways", BackendCrashed, "exited with code 0"),
        ("Sleeps", CaseTimeout, "did not finish this case within 0.3 s"),
        ("RaisesHuge", KeyError, "characters)"),
        ("ReturnsGarbage", Exception, "Object arrays cannot be saved"),
    ]
    for name, kind, said in cases:
        backend = IsolatedBackend(f"tests.hostile_backends:{name}", case_timeout=0.3)
        try:
            with pytest.raises(Exception) as raised:
                backend.run(operator, {})
            assert isinstance(raised.value, kind) or type(raised.value).__name__ == kind.__name__
            assert said in str(raised.value) and len(str(raised.value)) < 5_000
        finally:
            backend.close()
    numpy = IsolatedBackend("numpy")
    try:
        assert numpy.run(operator, {})["OutputTensor"].tolist() == [0, 1, 2, 3]
    finally:
        numpy.close()


def test_the_isolation_pipe_carries_arrays_and_lists_of_arrays_without_pickle() -> None:
    from dmlspec.conformance.isolation import _arrays, _frame

    arrays = {"A": np.arange(3, dtype=np.uint64), "List": [np.ones(2, np.float16), np.zeros(0)]}
    frame = _frame({"kind": "x"}, arrays)
    length = int.from_bytes(frame[:8], "big")
    header = json.loads(frame[8 : 8 + length])
    rest = memoryview(frame)[8 + length :]
    position = 0

    def read(size: int) -> bytes:
        nonlocal position
        position += size
        return bytes(rest[position - size : position])

    back = _arrays(header, read)
    assert back["A"].dtype == np.uint64 and back["A"].tolist() == [0, 1, 2]
    assert [a.dtype for a in back["List"]] == [np.float16, np.float64]
    with pytest.raises(ValueError, match="Object arrays cannot be saved"):
        _frame({}, {"x": np.array([object()])})


def test_an_isolated_backend_gives_up_after_three_crashes_in_a_row() -> None:
    backend = IsolatedBackend("tests.hostile_backends:ExitsAlways")
    try:
        for _ in range(3):
            with pytest.raises(BackendCrashed, match="exited with code 0"):
                backend.run(_fill(), {})
        started = time.monotonic()
        with pytest.raises(BackendCrashed, match="not restarted after 3 cases"):
            backend.run(_fill(), {})
        assert time.monotonic() - started < 0.1
    finally:
        backend.close()


# -- The Python API ---------------------------------------------------------------------------


def test_ops_raise_invalid_operator_for_malformed_calls() -> None:
    with pytest.raises(Unsupported, match=r"no kernel for 'x+'\.\.\. \(1000 characters\)"):
        ops.run("x" * 1000, {})  # type: ignore[arg-type]
    with pytest.raises(InvalidOperator):
        ops.gather_nd(np.float32(1), np.int32(0))
    with pytest.raises(InvalidOperator, match="ValueStart must be a finite number"):
        ops.fill_value_sequence(
            OutputTensor={"DataType": "INT32", "Sizes": [4]},
            ValueStart=float("nan"),
            ValueDelta=1,
        )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_validate_operator_rejects_non_finite_integer_scalars(value: float) -> None:
    result = validate_operator(_fill(ValueDelta=value))
    assert not result.valid
    assert [v.constraint for v in result.violations] == ["JSON.type"]


@pytest.mark.parametrize(
    "expression",
    [
        " + ".join(["ValueDelta"] * 3_000),
        "OutputTensor.Sizes" + "[0]" * 100_000 + " == 1",
        "-" * 100_000 + "ValueDelta == 1",
    ],
    ids=["sum-3000", "subscripts-100000", "minus-100000"],
)
def test_the_spec_loader_reports_deep_expressions_as_spec_errors(
    tmp_path: Path, expression: str
) -> None:
    spec_dir = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec_dir)
    path = spec_dir / "operators" / "fill_value_sequence.json"
    spec = json.loads(path.read_text())
    spec["constraints"][0]["expr"] = expression
    path.write_text(json.dumps(spec))
    started = time.monotonic()
    with pytest.raises(SpecError, match="nests deeper than 100 levels") as raised:
        load_catalog(spec_dir)
    assert time.monotonic() - started < 10
    assert len(str(raised.value)) < 2_000


# A Python where JAX cannot be imported (a dependency missing), then the CLI's generate check,
# which reads the kernels' primitives.
WITHOUT_JAX = """
import sys


class NoJax:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("jax", "jaxlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NoJax())
from dmlspec.cli import main

sys.exit(main(["generate", "--check"]))
"""


def test_a_missing_dependency_is_named_not_reported_as_an_internal_error() -> None:
    finished = subprocess.run(
        [sys.executable, "-c", WITHOUT_JAX], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert finished.returncode == 2, finished.stderr
    assert "internal error" not in finished.stderr and "Traceback" not in finished.stderr
    assert "needs the Python package 'jax'" in finished.stderr
    assert "jax is a dependency of dmlspec: in a checkout run python -m pip install -e ." in (
        finished.stderr
    )
