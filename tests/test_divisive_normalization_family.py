"""The divisive normalizations (LOCAL_RESPONSE_NORMALIZATION, its gradient, LP_NORMALIZATION):
the pages' formulas worked by hand on dmlspec's kernels, the NumPy reference and onnxruntime
(the region's placement for odd and even sizes, across channels and within them; the norms and
the readings of Epsilon); the gradient against finite differences of the forward operator; the
size and undefined-result rules firing by id; the generated suites pass, and broken backends
(Alpha not divided by LocalSize, the L1 and L2 norms swapped) are caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.accuracy import check_dot_product
from dmlspec.validation import check_requires, validate_operator

from .sweeps import fails_drawn_cases, sweep
from .test_conformance import conformance

OPERATORS = (
    "LOCAL_RESPONSE_NORMALIZATION",
    "LOCAL_RESPONSE_NORMALIZATION_GRAD",
    "LP_NORMALIZATION",
)


def _tensor(sizes: list[int], data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def _lrn(sizes: list[int], *, grad: bool = False, **fields: Any) -> dict[str, Any]:
    if grad:
        tensors = {f: _tensor(sizes) for f in ("InputTensor", "InputGradientTensor")}
        tensors["OutputGradientTensor"] = _tensor(sizes)
    else:
        tensors = {"InputTensor": _tensor(sizes), "OutputTensor": _tensor(sizes)}
    name = "LOCAL_RESPONSE_NORMALIZATION" + ("_GRAD" if grad else "")
    return {"type": f"DML_OPERATOR_{name}", "desc": {**tensors, **fields}}


def _lp(sizes: list[int], **fields: Any) -> dict[str, Any]:
    desc = {"InputTensor": _tensor(sizes), "OutputTensor": _tensor(sizes), **fields}
    return {"type": "DML_OPERATOR_LP_NORMALIZATION", "desc": desc}


def _outputs(operator: dict[str, Any], inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The reference's and the kernel's only output."""
    return [next(iter(run(operator, inputs).values())) for run in (reference.run, ops.run)]


CHANNELS = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)


@pytest.mark.parametrize(
    ("local_size", "alpha", "divisors"),
    [
        (3, 3.0, [1 + 5, 1 + 14, 1 + 13]),  # channels c-1..c+1: 1+4, 1+4+9, 4+9
        (2, 2.0, [1 + 5, 1 + 13, 1 + 9]),  # c..c+1 (floor((2-1)/2) = 0 before): 1+4, 4+9, 9
        (9, 9.0, [1 + 14, 1 + 14, 1 + 14]),  # clipped to the three channels
    ],
)
def test_lrn_across_channels_by_hand(local_size: int, alpha: float, divisors: list[int]) -> None:
    # Alpha / LocalSize = 1, Bias 1, Beta 0.5: y = x / sqrt(1 + S).
    operator = _lrn([1, 3, 1, 1], CrossChannel=True, LocalSize=local_size, Alpha=alpha, Beta=0.5)
    operator["desc"]["Bias"] = 1.0
    expected = CHANNELS.reshape(-1) / np.sqrt(divisors)
    for result in _outputs(operator, {"InputTensor": CHANNELS}):
        np.testing.assert_allclose(result.reshape(-1), expected, rtol=1e-6)


def test_lrn_within_channels_by_hand() -> None:
    # LocalSize 2: rows h..h+1 by columns w..w+1, clipped; Alpha / LocalSize = 1, Bias 0,
    # Beta 1: y = x / S.
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    operator = _lrn([1, 1, 2, 2], CrossChannel=False, LocalSize=2, Alpha=2.0, Beta=1.0, Bias=0.0)
    expected = [1 / 30, 2 / 20, 3 / 25, 4 / 16]
    for result in _outputs(operator, {"InputTensor": x}):
        np.testing.assert_allclose(result.reshape(-1), expected, rtol=1e-6)


@pytest.mark.parametrize(("cross", "local_size"), [(True, 2), (True, 3), (False, 2), (False, 5)])
def test_lrn_grad_is_the_forward_operator_s_gradient(cross: bool, local_size: int) -> None:
    rng = np.random.default_rng(local_size)
    x = rng.uniform(-2, 2, (2, 4, 3, 3))
    g = rng.uniform(-2, 2, x.shape)
    fields: dict[str, Any] = {"CrossChannel": cross, "LocalSize": local_size, "Alpha": 0.5}
    fields["Beta"] = 0.75
    forward, backward = (
        _lrn(list(x.shape), Bias=1.0, **fields),
        _lrn(list(x.shape), grad=True, Bias=1.0, **fields),
    )
    value, bound, _ = reference.run_exact(backward, {"InputTensor": x, "InputGradientTensor": g})[
        "OutputGradientTensor"
    ]
    # Central differences of the reference's forward operator (FLOAT64), element by element.
    step = 1e-6
    numeric = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        moved = [x.copy(), x.copy()]
        moved[0][index] += step
        moved[1][index] -= step
        ends = [reference.run_exact(forward, {"InputTensor": m})["OutputTensor"][0] for m in moved]
        numeric[index] = float(np.sum(g * (ends[0] - ends[1]))) / (2 * step)
    np.testing.assert_allclose(value, numeric, rtol=1e-6, atol=1e-8)
    assert (bound >= np.abs(value)).all()
    # The kernel (jax.vjp of the forward kernel) is within the spec's bound of it.
    inputs = {"InputTensor": x.astype(np.float32), "InputGradientTensor": g.astype(np.float32)}
    kernel = ops.run(backward, inputs)["OutputGradientTensor"]
    exact = reference.run_exact(backward, inputs)["OutputGradientTensor"]
    terms = 2 * local_size ** (1 if cross else 2) + 112
    assert check_dot_product(exact[0], exact[1], kernel, terms, "FLOAT32", statistics=False).passed


def test_lp_normalization_by_hand_and_the_readings_of_epsilon() -> None:
    x = np.array([[3, 4], [0, 0]], np.float32)
    for p, norm in ((2, 5.0), (1, 7.0)):
        operator = _lp([2, 2], Axis=1, Epsilon=0.0, P=p)
        for result in _outputs(operator, {"InputTensor": x}):
            np.testing.assert_allclose(result[0], x[0] / norm, rtol=1e-6)
            assert np.isnan(result[1]).all()  # 0 / 0 with Epsilon 0
    # Epsilon 1: x / 6 (the reference's), x / max(5, 1) and x / sqrt(25 + 1) all pass.
    operator = _lp([2, 2], Axis=1, Epsilon=1.0, P=2)
    value, bound, largest = reference.run_exact(operator, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_allclose(value[0], x[0] / 6)
    np.testing.assert_array_equal(value[1], [0, 0])
    np.testing.assert_array_equal(largest[0], [25, 25])  # the sum before the root
    for reading in (x / 6, x / 5, x / np.sqrt(26)):
        got = reading.astype(np.float32)
        assert check_dot_product(value, bound, got, 1, "FLOAT32", statistics=False).passed
    wrong = (x / 4).astype(np.float32)
    assert not check_dot_product(value, bound, wrong, 1, "FLOAT32", statistics=False).passed


def test_size_and_undefined_result_rules_fire_by_id() -> None:
    operator = _lp([2, 3, 4, 5], Axis=3, Epsilon=1e-5, P=2)
    assert validate_operator(operator).valid
    for change, rule in (({"Axis": 4}, "C4"), ({"P": 3}, "C5"), ({"P": 0}, "C5")):
        changed = {**operator, "desc": {**operator["desc"], **change}}
        assert validate_operator(changed).fired() == (f"LP_NORMALIZATION.{rule}",)
    negative = {**operator, "desc": {**operator["desc"], "Epsilon": -1.0}}
    report = check_requires(negative, {"InputTensor": np.ones((2, 3, 4, 5), np.float32)})
    assert [v.constraint for v in report.violations] == ["LP_NORMALIZATION.R1"]
    assert report.undefined["OutputTensor"].all()
    lrn = _lrn([1, 2, 2, 2], CrossChannel=True, LocalSize=0, Alpha=1.0, Beta=0.75, Bias=1.0)
    assert validate_operator(lrn).fired() == ("LOCAL_RESPONSE_NORMALIZATION.C3",)


def test_onnxruntime_graphs_match_the_reference() -> None:
    pytest.importorskip("onnxruntime")
    from dmlspec.backends.onnxruntime import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    rng = np.random.default_rng(7)
    # LRN itself on one channel (its running sum across channels diverges) and the
    # Conv-of-ones graph otherwise.
    for channels, cross, size, alpha in (
        (1, True, 3, 0.5),
        (5, True, 3, 0.5),
        (5, True, 4, 0.5),
        (5, True, 3, -0.5),
        (5, False, 2, 0.5),
    ):
        x = rng.standard_normal((2, channels, 3, 4)).astype(np.float32)
        g = rng.standard_normal(x.shape).astype(np.float32)
        fields: dict[str, Any] = {"CrossChannel": cross, "LocalSize": size, "Alpha": alpha}
        fields["Beta"] = 0.75
        for operator, inputs in (
            (_lrn(list(x.shape), Bias=2.0, **fields), {"InputTensor": x}),
            (
                _lrn(list(x.shape), grad=True, Bias=2.0, **fields),
                {"InputTensor": x, "InputGradientTensor": g},
            ),
        ):
            got = next(iter(backend.run(operator, inputs).values()))
            expected = next(iter(reference.run(operator, inputs).values()))
            np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-7)
    # LpNormalization, and x / Epsilon where the norm is below it (ONNX has no epsilon).
    small = np.array([[0.3, 0.4], [3, 4]], np.float32)
    got = backend.run(_lp([2, 2], Axis=1, Epsilon=1.0, P=2), {"InputTensor": small})
    np.testing.assert_allclose(got["OutputTensor"], [[0.3, 0.4], [0.6, 0.8]], rtol=1e-6)


BROKEN = {
    "tests.divisive_normalization_backends:UndividedAlpha": OPERATORS[:2],
    "tests.divisive_normalization_backends:SwappedNormOrder": OPERATORS[2:],
}


@pytest.mark.parametrize("backend", sweep([[b] for b in BROKEN], list(BROKEN)))
def test_a_broken_backend_fails_drawn_cases(backend: str) -> None:
    # Quick: drawn cases through the suites' own check, the first failure enough; the whole
    # suites run in the slow set below.
    fails_drawn_cases(backend, BROKEN[backend])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_divisive_normalization_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", *OPERATORS, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "support cells hit 41/41" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_the_suites_catch_a_broken_backend(backend: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", *BROKEN[backend], "--workers", "0")
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {t["operator"] for t in results["tests"] if t["outcome"] == "failed"}
    assert failed == set(BROKEN[backend])
