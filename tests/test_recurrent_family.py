"""The recurrent family (RNN, LSTM, GRU): the size rules fire by id (DxDispatch's dml_rnn.json
valid, and rejected with a longer output), the activation count per direction, and the
sequence lengths' rows left undefined."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import Unsupported, ops, reference
from dmlspec.backends import load_backend
from dmlspec.interop.dispatch import run_model
from dmlspec.validation import check_requires, validate_operator

from .conftest import REPO_ROOT
from .sweeps import fails_drawn_cases, sweep
from .test_conformance import conformance

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


def _run_both(operator: dict[str, Any], inputs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The kernel's and the reference's outputs."""
    return [
        {k: np.asarray(v) for k, v in ops.run(operator, inputs).items()},
        reference.run(operator, inputs),
    ]


def _f32(*values: Any) -> np.ndarray:
    return np.array(values, np.float32)


def test_rnn_by_hand_both_directions_and_lengths() -> None:
    # hidden 1, input 1, batch 2, 3 steps, IDENTITY: h_t = w x_t + r h_t-1 + wb + rb
    operator = recurrent("RNN", "BIDIRECTIONAL", steps=3, batch=2, inputs=1, hidden=1)
    operator["desc"]["ActivationDescs"] = [{"Type": "ACTIVATION_IDENTITY"}] * 2
    x = _f32(1, 10, 2, 20, 3, 30).reshape(1, 3, 2, 1)
    inputs = {
        "InputTensor": x,
        "WeightTensor": _f32(1, -1).reshape(1, 2, 1, 1),
        "RecurrenceTensor": _f32(2, 0.5).reshape(1, 2, 1, 1),
        "BiasTensor": _f32(0.25, 0.25, 0, 1).reshape(1, 1, 2, 2),
        "HiddenInitTensor": _f32(0, 0, 4, 8).reshape(1, 2, 2, 1),
        "SequenceLengthsTensor": np.array([3, 2], np.uint32).reshape(1, 1, 1, 2),
    }
    # forward, batch 0: 1.5, 2 + 3 + 0.5 = 5.5, 3 + 11 + 0.5 = 14.5; batch 1 (2 steps): 10.5, 41.5
    # backward (w -1, r 0.5, bias 1): batch 0 from t = 2: -3 + 2 + 1 = 0, t = 1: -2 + 0 + 1 = -1,
    # t = 0: -1 - 0.5 + 1 = -0.5; batch 1 from t = 1: -20 + 4 + 1 = -15, t = 0: -10 - 7.5 + 1
    sequence = np.zeros((3, 2, 2, 1), np.float32)
    sequence[:, 0, 0, 0] = [1.5, 5.5, 14.5]
    sequence[:2, 0, 1, 0] = [10.5, 41.5]
    sequence[:, 1, 0, 0] = [-0.5, -1, 0]
    sequence[:2, 1, 1, 0] = [-16.5, -15]
    for outputs in _run_both(operator, inputs):
        defined = np.ones(sequence.shape, bool)
        defined[2, :, 1] = False  # past batch 1's length (R1)
        np.testing.assert_array_equal(outputs["OutputSequenceTensor"][defined], sequence[defined])
        np.testing.assert_array_equal(
            outputs["OutputSingleTensor"].reshape(-1), [14.5, 41.5, -0.5, -16.5]
        )


def test_lstm_gates_peepholes_coupling_and_clip_by_hand() -> None:
    # hidden 1, input 1, batch 1, 1 step; f = IDENTITY, g = IDENTITY, h = TANH; gates i, o, f, c
    operator = recurrent("LSTM", steps=1, batch=1, inputs=1, hidden=1)
    desc = operator["desc"]
    desc["ActivationDescs"] = [
        {"Type": "ACTIVATION_IDENTITY"},
        {"Type": "ACTIVATION_IDENTITY"},
        {"Type": "ACTIVATION_TANH"},
    ]
    inputs = {
        "InputTensor": _f32(1).reshape(1, 1, 1, 1),
        "WeightTensor": _f32(0.5, 0.25, 0.125, 2).reshape(1, 1, 4, 1),  # i, o, f, c
        "RecurrenceTensor": _f32(0, 0, 0, 0).reshape(1, 1, 4, 1),
        "BiasTensor": np.zeros((1, 1, 1, 8), np.float32),
        "HiddenInitTensor": _f32(0).reshape(1, 1, 1, 1),
        "CellMemInitTensor": _f32(4).reshape(1, 1, 1, 1),
        "PeepholeTensor": _f32(0.125, 0.5, 0.25).reshape(1, 1, 1, 3),  # i, o, f
        "SequenceLengthsTensor": np.ones((1, 1, 1, 1), np.uint32),
    }
    i = 0.5 + 0.125 * 4  # 1
    forget = 0.125 + 0.25 * 4  # 1.125
    c = forget * 4 + i * 2  # 6.5
    o = 0.25 + 0.5 * c  # 3.5, the output gate peeps at the new cell
    for outputs in _run_both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputCellSingleTensor"].item(), c, rtol=1e-6)
        np.testing.assert_allclose(outputs["OutputSingleTensor"].item(), o * np.tanh(c), rtol=1e-6)
    desc.update(CoupleInputForget=True, UseClipThreshold=True, ClipThreshold=3.0)
    c = (1 - i) * 4 + i * 2  # the forget gate is 1 - i: 2
    o = min(0.25 + 0.5 * c, 3.0)  # 1.25, clipped inputs of activations
    for outputs in _run_both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputCellSingleTensor"].item(), c, rtol=1e-6)
        np.testing.assert_allclose(outputs["OutputSingleTensor"].item(), o * np.tanh(c), rtol=1e-6)
    inputs["CellMemInitTensor"] = _f32(10).reshape(1, 1, 1, 1)  # i = 0.5 + 1.25 = 1.75
    c = (1 - 1.75) * 10 + 1.75 * 2  # -4: the gates' inputs are clipped, h()'s input Ct is not
    for outputs in _run_both(operator, inputs):
        np.testing.assert_allclose(outputs["OutputCellSingleTensor"].item(), c, rtol=1e-6)
        np.testing.assert_allclose(
            outputs["OutputSingleTensor"].item(), max(0.25 + 0.5 * c, -3) * np.tanh(c), rtol=1e-6
        )


@pytest.mark.parametrize("linear_before_reset", [False, True])
def test_gru_reset_gate_before_or_after_the_linear_map_by_hand(linear_before_reset: bool) -> None:
    # hidden 1, input 1, batch 1, 1 step; f = IDENTITY, g = IDENTITY; gates z, r, h
    operator = recurrent("GRU", steps=1, batch=1, inputs=1, hidden=1)
    operator["desc"]["ActivationDescs"] = [{"Type": "ACTIVATION_IDENTITY"}] * 2
    operator["desc"]["LinearBeforeReset"] = linear_before_reset
    inputs = {
        "InputTensor": _f32(1).reshape(1, 1, 1, 1),
        "WeightTensor": _f32(0.25, 0.5, 1).reshape(1, 1, 3, 1),
        "RecurrenceTensor": _f32(0, 0, 2).reshape(1, 1, 3, 1),
        # Wb z, r, h then Rb z, r, h
        "BiasTensor": _f32(0, 0, 0.5, 0, 0, 4).reshape(1, 1, 1, 6),
        "HiddenInitTensor": _f32(3).reshape(1, 1, 1, 1),
        "SequenceLengthsTensor": np.ones((1, 1, 1, 1), np.uint32),
    }
    z, r = 0.25, 0.5
    # the reset gate after the linear map of the state, or before it
    candidate = 1 + r * (2 * 3 + 4) + 0.5 if linear_before_reset else 1 + 2 * (r * 3) + 4 + 0.5
    for outputs in _run_both(operator, inputs):
        np.testing.assert_allclose(
            outputs["OutputSingleTensor"].item(), (1 - z) * candidate + z * 3, rtol=1e-6
        )


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
def test_dxdispatch_rnn_model_runs(capsys: pytest.CaptureFixture[str]) -> None:
    run_model(DXDISPATCH / "dml_rnn.json", load_backend("jax"), False)
    printed = capsys.readouterr().out
    # one step from a zero state: ELU(W x) per direction, W x positive (ELU the identity there)
    x = np.arange(1, 33, dtype=np.float64).reshape(8, 4)
    w = (1 + 0.4 * np.arange(40)).reshape(2, 5, 4)
    expected = np.einsum("bi,dhi->dbh", x, w).astype(np.float32).reshape(-1)
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", printed)]
    np.testing.assert_allclose(numbers[-80:], expected, rtol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("name", sorted(GATES))
def test_the_recurrent_suites_pass(backend: str, name: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", name, "--profile", "ci", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20


@pytest.mark.parametrize("name", sorted(GATES))
def test_onnxruntime_runs_the_family_within_the_bound(name: str) -> None:
    pytest.importorskip("onnxruntime", reason="the peers extra (onnxruntime) is not installed")
    from dmlspec.accuracy import check_dot_product

    operator = recurrent(name, "BIDIRECTIONAL", steps=3, batch=2, inputs=2, hidden=2)
    desc = operator["desc"]
    kinds: list[dict[str, Any]] = [{"Type": "ACTIVATION_SIGMOID"}, {"Type": "ACTIVATION_TANH"}]
    kinds.append({"Type": "ACTIVATION_SCALED_TANH", "Alpha": 1.5, "Beta": 0.5})
    desc["ActivationDescs"] = kinds[: ACTIVATIONS[name]] * 2
    if name == "LSTM":  # the gates' inputs clipped, Ct (h()'s input) not: as onnxruntime
        desc.update(UseClipThreshold=True, ClipThreshold=0.5, CoupleInputForget=True)
    if name == "GRU":
        desc["LinearBeforeReset"] = True
    rng = np.random.default_rng(7)
    inputs: dict[str, np.ndarray] = {
        field: np.asarray(rng.uniform(-2, 2, tensor["Sizes"]), np.float32)
        for field, tensor in desc.items()
        if isinstance(tensor, dict) and "Output" not in field and tensor["DataType"] != "UINT32"
    }
    inputs["SequenceLengthsTensor"] = np.array([3, 3], np.uint32).reshape(1, 1, 1, 2)
    got = load_backend("onnxruntime").run(operator, inputs)
    for field, (value, bound, _) in reference.run_exact(operator, inputs).items():
        terms = 2 + 2 + (2 if name == "RNN" else 3)
        verdict = check_dot_product(value, bound, got[field], terms, "FLOAT32", statistics=False)
        assert verdict.passed, (field, verdict.describe())
    desc["ActivationDescs"][0] = {"Type": "ACTIVATION_GELU"}
    with pytest.raises(Unsupported, match="no activation ACTIVATION_GELU"):
        load_backend("onnxruntime").run(operator, inputs)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GATES))
def test_the_recurrent_suites_pass_on_onnxruntime(name: str, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    run = conformance("onnxruntime", tmp_path, "--ops", name, "--profile", "ci", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 20


# the quickest to catch first: the default suite keeps it
BROKEN = {
    "tests.recurrent_backends:SwappedGates": ("GRU", "LSTM"),
    "tests.recurrent_backends:IgnoredSequenceLengths": ("GRU", "LSTM", "RNN"),
}


@pytest.mark.parametrize("backend", sweep([[b] for b in BROKEN], ids=list(BROKEN), kept=1))
def test_a_broken_backend_fails_drawn_cases(backend: str) -> None:
    # Quick: drawn cases per operator through the suites' own check, the first failure enough;
    # the whole suites run in the slow set below.
    fails_drawn_cases(backend, BROKEN[backend])


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_the_suites_catch_a_broken_backend(backend: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", *BROKEN[backend], "--profile", "ci")
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {t["operator"] for t in results["tests"] if t["outcome"] == "failed"}
    assert failed == set(BROKEN[backend])
