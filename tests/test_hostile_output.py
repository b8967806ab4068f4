"""Hostile input, round two: what dmlspec prints of its input (names quoted, escape sequences
never raw, short lines) and how a run ends that a backend interrupts (see test_hostile.py for
the arena)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_hostile import GATHER, Arena, _fill, _vectors, expect

ESCAPE = "\x1b]0;owned\x07\x1b[2J"  # sets the terminal's title, clears the screen
INTERRUPTED = "tests.declining_backends:Interrupted"


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    return Arena(tmp_path)


def _no_raw_control(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text[-500:])


def _resource(values: Any) -> dict[str, Any]:
    return {"initialValuesDataType": "INT32", "initialValues": values}


def test_dispatch_prints_a_resource_s_name_quoted(arena: Arena) -> None:
    name = f"r{ESCAPE}"
    model = {
        "resources": {name: _resource([1, 2])},
        "commands": [{"type": "print", "resource": name}],
    }
    outcome = arena.run(
        "dispatch", str(arena.file("m.json", model)), "--backend", "numpy", isolate=False
    )
    expect(outcome, 0, "Resource 'r\\x1b]0;owned\\x07\\x1b[2J': 1, 2\n")
    _no_raw_control(outcome.stdout + outcome.stderr)


@pytest.mark.parametrize(
    "model",
    [
        pytest.param({"resources": {f"r{ESCAPE}": _resource("x")}}, id="resource"),
        pytest.param(
            {"dispatchables": {f"d{ESCAPE}": _fill(ValueDataType="X")}}, id="dispatchable"
        ),
        pytest.param(
            {"dispatchables": {f"d{ESCAPE}": {"type": "NO_SUCH", "desc": {}}}}, id="unknown-type"
        ),
        pytest.param({"resources": {"r\n" * 200: _resource("x")}}, id="line-breaks"),
    ],
)
def test_dispatch_quotes_names_in_its_messages(arena: Arena, model: dict[str, Any]) -> None:
    outcome = arena.run(
        "dispatch", str(arena.file("m.json", model)), "--backend", "numpy", isolate=False
    )
    expect(outcome, 2, "'/")
    _no_raw_control(outcome.stderr)


def test_validate_quotes_dispatchable_names(arena: Arena) -> None:
    model = {
        "dispatchables": {
            f"a{ESCAPE}": _fill(),
            f"b{ESCAPE}": {"type": "hlsl", "sourcePath": "x.hlsl"},
        }
    }
    outcome = arena.run("validate", str(arena.file("m.json", model)), isolate=False)
    expect(outcome, 0, "m.json ['a\\x1b]0;owned\\x07\\x1b[2J']: valid", "['b\\x1b]0;owned")
    _no_raw_control(outcome.stdout + outcome.stderr)


def test_run_vectors_refuses_a_case_id_that_is_not_printable(arena: Arena) -> None:
    folder = _vectors(arena.work, case_id=f"g{ESCAPE}")
    outcome = arena.run("run-vectors", str(folder), "--backend", "numpy", isolate=False)
    expect(outcome, 2, "manifest.json at /cases/0/id must be printable text; got 'g\\x1b]0;")
    _no_raw_control(outcome.stderr)


def test_run_vectors_prints_case_ids_quoted(arena: Arena) -> None:
    folder = _vectors(arena.work, case_id="g")
    backend = "tests.declining_backends:DeclinesEverything"
    outcome = arena.run("run-vectors", str(folder), "--backend", backend, isolate=False)
    expect(outcome, 1, "SKIPPED 'g': nothing is implemented")


def test_dispatch_of_an_unknown_operator_names_the_closest_few_in_a_short_line(
    arena: Arena,
) -> None:
    model = {"dispatchables": {"g": {**GATHER, "type": "DML_OPERATOR_GATHER_ND2"}}}
    path = str(arena.file("m.json", model))
    outcome = arena.run("dispatch", path, isolate=False)
    expect(outcome, 2, "cannot run 'DML_OPERATOR_GATHER_ND2'", "the closest: DML_OPERATOR_GATHER")
    said = outcome.stderr.replace(path, "m.json")  # the temporary folder's length varies
    assert len(said) < 250 and "DML_OPERATOR_ACTIVATION_ELU" not in said
    model = {"dispatchables": {"g": {"type": "qqqqqqqqqqqqqqqqqqqqqqq"}}}
    outcome = arena.run("dispatch", str(arena.file("m.json", model)), isolate=False)
    expect(outcome, 2, "`dmlspec list` shows them")
    assert "closest" not in outcome.stderr and len(outcome.stderr) < 300


# -- a backend raising KeyboardInterrupt ------------------------------------------------------


def _interrupted(outcome: Any) -> None:
    everything = outcome.stdout + outcome.stderr
    assert outcome.code == 130, everything[-3000:]
    assert "Traceback" not in everything and "internal error" not in everything, everything[-3000:]
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dmlspec: interrupted"), outcome.stderr


@pytest.mark.parametrize("mode", [[], ["--in-process"]], ids=["backend-process", "in-process"])
def test_a_backend_raising_keyboard_interrupt_ends_conformance_in_one_line(
    arena: Arena, mode: list[str]
) -> None:
    report = arena.work / "report"
    outcome = arena.run(
        "conformance",
        "--backend",
        INTERRUPTED,
        "--ops",
        "FILL_VALUE_SEQUENCE",
        "--report",
        str(report),
        *mode,
        writes=report,
        timeout=120,
    )
    _interrupted(outcome)
    assert "the reports are incomplete" in outcome.stderr
    assert " passed" not in outcome.stdout  # it stopped at the first case, no matrix after


def test_a_backend_raising_keyboard_interrupt_ends_run_vectors_in_one_line(arena: Arena) -> None:
    folder = _vectors(arena.work)
    _interrupted(arena.run("run-vectors", str(folder), "--backend", INTERRUPTED))


def test_a_backend_raising_keyboard_interrupt_ends_dispatch_in_one_line(arena: Arena) -> None:
    folder = _vectors(arena.work)
    model = json.loads((folder / "g" / "model.json").read_text())
    model["resources"] = {
        "InputTensor": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3, 4]},
        "IndicesTensor": {"initialValuesDataType": "UINT32", "initialValues": [1, 0]},
        "OutputTensor": {"initialValuesDataType": "FLOAT32", "initialValues": [0, 0, 0, 0]},
    }
    path = arena.file("m.json", model)
    _interrupted(arena.run("dispatch", str(path), "--backend", INTERRUPTED))
