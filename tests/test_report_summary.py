"""Skip reasons a user understands, reasons for unexercised cells and layouts, and the
messages of `--ops` (dmlspec.conformance.summary, the CLI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dmlspec.conformance.summary import (
    by_operator,
    skip_reason,
    skip_reasons,
    unhit_cell_reasons,
    unhit_layout_reasons,
)
from dmlspec.model import Catalog
from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT

# Every skip message the suites and pytest give, and the reason it is counted under.
SKIPS = [
    ("Skipped: jax claims 6_4, which includes 3_0", "boundary test of a cell the backend's"),
    ("Skipped: jax claims 6_4, which includes 5_0", "boundary test of a cell the backend's"),
    ("Skipped: numpy does not validate descs (validates is False)", "the backend does not"),
    ("Skipped: got empty parameter set for (example)", "nothing to run: the spec documents no"),
    (
        "Skipped: got empty parameter set ['level', 'tensor', 'kind', 'value'], function x",
        "nothing to run: the spec's support tables have no cell",
    ),
    ("Skipped: jax claims feature level 2_1, below 3_0", "the cell is introduced above"),
    ("Skipped: GATHER does not exist at 1_0", "the operator is introduced above"),
    ("Skipped: example e1 is valid only from 5_0", "the documented example needs a higher"),
    ("Skipped: ort does not implement this case: no Philox", "the backend does not implement"),
    ("Skipped: ort declined 4 cases of this cell: x", "the backend declined every case"),
    ("Skipped: no desc breaking only SLICE1.C5 was found: the rows imply it", "no valid desc"),
    ("Skipped: no drawn JOIN desc can break TENSOR.C10 alone", "no valid desc breaks"),
    (
        "Skipped: at 3_0 every desc breaking X.C1 also breaks the support row; it is tested",
        "the constraint cannot be broken alone at this level",
    ),
    ("Skipped: no tensor of FILL_VALUE_SEQUENCE can take the broadcast layout", "no tensor of"),
    ("Skipped: something new", "something new"),
]


@pytest.mark.parametrize(("message", "reason"), SKIPS)
def test_each_skip_message_is_counted_under_a_reason_a_user_understands(
    message: str, reason: str
) -> None:
    said = skip_reason(message)
    assert said.startswith(reason), said
    assert "Skipped:" not in said and "parameter set" not in said


def _results() -> dict[str, object]:
    test = {"operator": "GATHER", "nodeid": "test_gather.py::"}
    return {
        "tests": [
            {**test, "test": "test_support_cell", "outcome": "skipped", "level": "4_1"}
            | {"nodeid": "test_gather.py::test_support_cell[5_0-InputTensor-data_type-INT64]"}
            | {"message": "Skipped: ort declined 4 cases of this cell: no int64"},
            {**test, "test": "test_strided_layout", "layout": "padded", "outcome": "passed"},
            {**test, "test": "test_rejects_desc_breaking", "outcome": "skipped"}
            | {"message": "Skipped: ort does not validate descs (validates is False)"},
        ],
        "coverage": {
            "cells": [
                {"operator": "GATHER", "level": "5_0", "tensor": "InputTensor"}
                | {"kind": "data_type", "value": "INT64", "hits": 0},
                {"operator": "GATHER", "level": "5_0", "tensor": "InputTensor"}
                | {"kind": "rank", "value": "8", "hits": 0},
                {"operator": "GATHER", "level": "5_0", "tensor": "OutputTensor"}
                | {"kind": "rank", "value": "4", "hits": 3},
            ]
        },
        "layouts": {
            "layouts": [
                {"operator": "GATHER", "tensor": "IndicesTensor", "layout": "padded", "hits": 0},
                {"operator": "GATHER", "tensor": "InputTensor", "layout": "broadcast", "hits": 0},
                {"operator": "GATHER", "tensor": "InputTensor", "layout": "padded", "hits": 2},
            ]
        },
    }


def test_every_unhit_cell_and_layout_has_a_reason() -> None:
    results = _results()
    cells = unhit_cell_reasons(results)
    assert [(c["kind"], c["value"]) for c, _ in cells] == [("data_type", "INT64"), ("rank", "8")]
    assert cells[0][1] == (
        "its support-cell test was skipped: the backend declined every case drawn for the "
        "cell (Unsupported)"
    )
    assert cells[1][1].startswith("its support-cell test did not run")
    layouts = unhit_layout_reasons(results)
    assert [(r["tensor"], r["layout"]) for r, _ in layouts] == [
        ("IndicesTensor", "padded"),
        ("InputTensor", "broadcast"),
    ]
    assert layouts[0][1].startswith("the padded case ran, but this tensor could not take")
    assert layouts[1][1].startswith("its broadcast-layout test did not run")


def test_skips_are_counted_by_reason_and_operators_summed_up() -> None:
    results = _results()
    assert skip_reasons(results) == [
        ("the backend declined every case drawn for the cell (Unsupported)", 1),
        (
            "the backend does not validate descs (validates = False), so the tests that it "
            "rejects invalid ones do not apply",
            1,
        ),
    ]
    (gather,) = by_operator(results)
    assert (gather.outcomes, gather.cells_hit, gather.cells) == (
        (1, 0, 2, 0, 0, 0),
        1,
        3,
    )  # no flaky case
    assert gather.verdict == "passed"


def test_an_unknown_operator_type_counts_operators_not_names(catalog: Catalog) -> None:
    (violation,) = validate_operator({"type": "DML_OPERATOR_SCATER", "desc": {}}).violations
    assert f"({len(catalog.operators)} operators known" in violation.message
    assert "did you mean SCATTER" in violation.message


def _cli(*args: str, spec_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    if spec_dir is not None:
        environment["DMLSPEC_SPEC_DIR"] = str(spec_dir)
    return subprocess.run(
        [sys.executable, "-m", "dmlspec", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=900,
        env=environment,
    )


def _without_a_kernel(tmp_path: Path, operator: str) -> Path:
    """A copy of the specs with one operator's kernel block removed: every operator of the
    catalog has a kernel now, and a user's own spec may lack one."""
    spec_dir = tmp_path / "spec"
    shutil.copytree(REPO_ROOT / "spec", spec_dir)
    path = spec_dir / "operators" / f"{operator.lower()}.json"
    spec = json.loads(path.read_text(encoding="utf-8"))
    del spec["kernel"]
    path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    return spec_dir


def test_ops_without_a_kernel_are_left_out_in_one_line_and_the_rest_runs(
    tmp_path: Path, catalog: Catalog
) -> None:
    pytest.importorskip("onnxruntime", reason="the peers extra (onnxruntime) is not installed")
    finished = _cli(
        "conformance",
        "--backend",
        "onnxruntime",
        "--ops",
        "ROI_ALIGN_GRAD",
        "FILL_VALUE_SEQUENCE",
        "--report",
        str(tmp_path / "report"),
        spec_dir=_without_a_kernel(tmp_path, "ROI_ALIGN_GRAD"),
    )
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    having = f"{len(catalog.with_kernels) - 1} of {len(catalog.operators)} operators have kernels"
    assert finished.stderr == (
        f"dmlspec: left out ROI_ALIGN_GRAD: no conformance suite yet ({having}; "
        "`dmlspec list` shows which)\n"
    )
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert {t["operator"] for t in results["tests"]} == {"FILL_VALUE_SEQUENCE"}
    # onnxruntime's expected failures are all of other operators: none is this run's business
    assert results["expected_failures"] == []
    assert "matches no test" not in finished.stdout
    assert "expected failure" not in finished.stdout


def test_ops_naming_only_operators_without_kernels_is_one_short_line(tmp_path: Path) -> None:
    spec_dir = _without_a_kernel(tmp_path, "ROI_ALIGN_GRAD")
    report = str(tmp_path / "report")
    finished = _cli("conformance", "--ops", "ROI_ALIGN_GRAD", "--report", report, spec_dir=spec_dir)
    assert finished.returncode == 2
    assert finished.stderr.count("\n") == 1 and len(finished.stderr) < 300, finished.stderr
    unknown = _cli("export", "--out", str(tmp_path), "--ops", "CONVOLUTON")
    assert unknown.returncode == 2
    assert "did you mean CONVOLUTION" in unknown.stderr and len(unknown.stderr) < 300


def test_the_target_hypothesis_shows_stays_short_however_much_ran() -> None:
    from dmlspec.backends import NumpyBackend
    from dmlspec.conformance.suite import Target

    target = Target(NumpyBackend(), "6_4")
    for n in range(5000):
        target.cells[("GATHER", "6_4", "InputTensor", "rank", str(n))] += 1
    assert repr(target) == "Target('numpy', '6_4')"


@pytest.mark.parametrize(
    ("sizes", "pointed"),
    [
        (([1, 1, 2, 2], [1, 1, 2, 2], [1, 1, 2, 3]), "/desc/OutputTensor/Sizes"),
        (([1, 1, 2, 3], [1, 1, 2, 2], [1, 1, 2, 2]), "/desc/ATensor/Sizes"),
        (([1, 1, 2, 2], [1, 1, 2, 3], [1, 1, 2, 2]), "/desc/BTensor/Sizes"),
        (([1, 1, 2, 1], [1, 1, 2, 3], [1, 1, 2, 2]), "/desc/ATensor/Sizes"),  # no majority
    ],
)
def test_a_sizes_violation_points_at_the_tensor_that_differs_from_the_others(
    sizes: tuple[list[int], ...], pointed: str
) -> None:
    tensors = ("ATensor", "BTensor", "OutputTensor")
    desc = {t: {"DataType": "FLOAT32", "Sizes": s} for t, s in zip(tensors, sizes, strict=True)}
    result = validate_operator({"type": "DML_OPERATOR_ELEMENT_WISE_ADD", "desc": desc})
    (violation,) = [v for v in result.violations if v.constraint == "ELEMENT_WISE_ADD.C3"]
    assert violation.path == pointed
