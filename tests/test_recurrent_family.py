"""The recurrent family (RNN, LSTM, GRU): the size rules fire by id (DxDispatch's dml_rnn.json
valid, and rejected with a longer output), the activation count per direction, and the
sequence lengths' rows left undefined."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from dmlspec.validation import check_requires, validate_operator

from .conftest import REPO_ROOT

DXDISPATCH = REPO_ROOT.parent / "shared" / "reference" / "dxdispatch"
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
ACTIVATIONS = {"RNN": 1, "LSTM": 3, "GRU": 2}


def recurrent(
    name: str,
    direction: str = "FORWARD",
    steps: int = 3,
    batch: int = 2,
    inputs: int = 2,
    hidden: int = 2,
    data_type: str = "FLOAT32",
    **fields: Any,
) -> dict[str, Any]:
    """An RNN, LSTM or GRU desc with every tensor, sized as the pages say."""
    dirs = 2 if direction == "BIDIRECTIONAL" else 1
    gates = GATES[name]

    def tensor(*sizes: int, kind: str = data_type) -> dict[str, Any]:
        return {"DataType": kind, "Sizes": list(sizes)}

    desc: dict[str, Any] = {
        "InputTensor": tensor(1, steps, batch, inputs),
        "WeightTensor": tensor(1, dirs, gates * hidden, inputs),
        "RecurrenceTensor": tensor(1, dirs, gates * hidden, hidden),
        "BiasTensor": tensor(1, 1, dirs, 2 * gates * hidden),
        "HiddenInitTensor": tensor(1, dirs, batch, hidden),
        "SequenceLengthsTensor": tensor(1, 1, 1, batch, kind="UINT32"),
        "OutputSequenceTensor": tensor(steps, dirs, batch, hidden),
        "OutputSingleTensor": tensor(1, dirs, batch, hidden),
        "ActivationDescCount": ACTIVATIONS[name] * dirs,
        "ActivationDescs": [{"Type": "ACTIVATION_TANH"}] * (ACTIVATIONS[name] * dirs),
        "Direction": direction,
    }
    if name == "LSTM":
        desc["CellMemInitTensor"] = tensor(1, dirs, batch, hidden)
        desc["PeepholeTensor"] = tensor(1, 1, dirs, 3 * hidden)
        desc["OutputCellSingleTensor"] = tensor(1, dirs, batch, hidden)
        desc.update(ClipThreshold=0.0, UseClipThreshold=False, CoupleInputForget=False)
    if name == "GRU":
        desc["LinearBeforeReset"] = False
    desc.update(fields)
    return {"type": f"DML_OPERATOR_{name}", "desc": desc}


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
def test_dxdispatch_rnn_validates_and_a_longer_output_does_not() -> None:
    document = json.loads((DXDISPATCH / "dml_rnn.json").read_text())
    operator = {"type": "RNN", "desc": document["dispatchables"]["rnn"]["desc"]}
    assert validate_operator(operator).valid
    operator["desc"]["OutputSingleTensor"]["Sizes"][2] += 1
    result = validate_operator(operator)
    assert result.fired() == ("RNN.C11",)
    (violation,) = result.violations
    assert violation.path == "/desc/OutputSingleTensor"
    assert "{1, num_directions, batch_size, hidden_size}" in violation.message


@pytest.mark.parametrize("name", sorted(GATES))
@pytest.mark.parametrize("direction", ["FORWARD", "BACKWARD", "BIDIRECTIONAL"])
def test_every_tensor_sized_as_the_page_says_is_valid(name: str, direction: str) -> None:
    assert validate_operator(recurrent(name, direction)).valid


@pytest.mark.parametrize("name", sorted(GATES))
@pytest.mark.parametrize(
    ("tensor", "dimension", "rule"),
    [
        ("InputTensor", 0, "C4"),
        ("RecurrenceTensor", 1, "C5"),
        ("RecurrenceTensor", 2, "C5"),
        ("WeightTensor", 2, "C6"),
        ("BiasTensor", 3, "C7"),
        ("HiddenInitTensor", 2, "C8"),
        ("SequenceLengthsTensor", 3, "C9"),
        ("OutputSequenceTensor", 0, "C10"),
        ("OutputSingleTensor", 3, "C11"),
        ("CellMemInitTensor", 1, "C12"),
        ("PeepholeTensor", 3, "C13"),
        ("OutputCellSingleTensor", 2, "C14"),
    ],
)
def test_each_size_rule_fires_alone(name: str, tensor: str, dimension: int, rule: str) -> None:
    operator = recurrent(name)
    if tensor not in operator["desc"]:
        pytest.skip(f"{name} has no {tensor}")
    operator["desc"][tensor]["Sizes"][dimension] += 1
    assert validate_operator(operator).fired() == (f"{name}.{rule}",)


@pytest.mark.parametrize("name", sorted(GATES))
def test_the_activation_count_is_per_direction(name: str) -> None:
    for direction in ("FORWARD", "BIDIRECTIONAL"):
        operator = recurrent(name, direction)
        desc = operator["desc"]
        desc["ActivationDescCount"] -= 1
        desc["ActivationDescs"] = desc["ActivationDescs"][1:]
        assert validate_operator(operator).fired() == (f"{name}.C2",)


def test_rows_past_a_sequences_length_are_undefined() -> None:
    operator = recurrent("LSTM", steps=3, batch=3, hidden=1)
    lengths = np.array([1, 3, 0], np.uint32).reshape(1, 1, 1, 3)
    report = check_requires(operator, {"SequenceLengthsTensor": lengths})
    assert [v.constraint for v in report.violations] == ["LSTM.R1", "LSTM.R2", "LSTM.R3"]
    rows = report.undefined["OutputSequenceTensor"][:, 0, :, 0]
    # batch 0 runs one step; batch 1 all three; batch 2 (length 0) none, and is undefined
    assert rows.tolist() == [[False, False, True], [True, False, True], [True, False, True]]
    for single in ("OutputSingleTensor", "OutputCellSingleTensor"):
        assert report.undefined[single][0, 0, :, 0].tolist() == [False, False, True]
    full = copy.deepcopy(lengths)
    full[...] = 3
    assert check_requires(operator, {"SequenceLengthsTensor": full}).satisfied
