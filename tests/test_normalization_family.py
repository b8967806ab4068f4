"""The normalization family (MEAN_VARIANCE_NORMALIZATION(1, 2), BATCH_NORMALIZATION, its training
form and both gradients): the pages' formulas worked by hand on dmlspec's kernels and the NumPy
reference (layer normalization over the last axis, MVN's CrossChannel as MVN1's axes, MVN2's RMS
form, per-channel batch normalization, the training statistics and FusedAdd, the gradients
against jax's own derivative); the size rules firing by id; the accuracy bound of
dmlspec.normalization (a one-pass variance accepted, a cancelling variance left unjudged); the
generated suites pass on the kernels, the reference and onnxruntime, and broken backends are
caught (the sample variance, Epsilon ignored, the scale gradient uncentred)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmlspec import normalization, ops, reference
from dmlspec.backends import load_backend
from dmlspec.conformance.cases import draw_case
from dmlspec.conformance.check import CaseFailure, run_case
from dmlspec.conformance.suite import catalog
from dmlspec.validation import validate_operator

from .sweeps import sweep
from .test_conformance import conformance

NORMALIZATIONS = (
    "MEAN_VARIANCE_NORMALIZATION",
    "MEAN_VARIANCE_NORMALIZATION1",
    "MEAN_VARIANCE_NORMALIZATION2",
    "BATCH_NORMALIZATION",
    "BATCH_NORMALIZATION_TRAINING",
    "BATCH_NORMALIZATION_GRAD",
    "BATCH_NORMALIZATION_TRAINING_GRAD",
)
RTOL = 1e-5  # by-hand FLOAT32 results: a few roundings of values near 1


def _tensor(array: np.ndarray) -> dict[str, Any]:
    return {"DataType": "FLOAT32", "Sizes": list(array.shape)}


def _operator(name: str, tensors: dict[str, np.ndarray], **fields: Any) -> dict[str, Any]:
    return {
        "type": f"DML_OPERATOR_{name}",
        "desc": {**{k: _tensor(v) for k, v in tensors.items()}, **fields},
    }


def _both(operator: dict[str, Any], inputs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The reference's and the kernel's outputs."""
    return [reference.run(operator, inputs), ops.run(operator, inputs)]


X = np.array([[[[1, 2, 3, 4], [2, 4, 6, 8]], [[0, 1, 0, 1], [5, 5, 5, 9]]]], np.float32)


def test_layer_normalization_over_the_last_axis() -> None:
    scale = np.array([[[[1, 2, 3, 4]]]], np.float32)
    bias = np.array([[[[0, 0, 1, 1]]]], np.float32)
    operator = _operator(
        "MEAN_VARIANCE_NORMALIZATION1",
        {"InputTensor": X, "ScaleTensor": scale, "BiasTensor": bias, "OutputTensor": X},
        AxisCount=1,
        Axes=[3],
        NormalizeVariance=True,
        Epsilon=0.5,
    )
    x = X.astype(np.float64)
    mean = x.mean(axis=3, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=3, keepdims=True)  # the population variance
    expected = scale * (x - mean) / np.sqrt(variance + 0.5) + bias
    inputs = {"InputTensor": X, "ScaleTensor": scale, "BiasTensor": bias}
    for result in _both(operator, inputs):
        np.testing.assert_allclose(result["OutputTensor"], expected, rtol=RTOL, atol=1e-6)


def test_cross_channel_is_mvn1_over_channel_height_and_width() -> None:
    # The remarks: Axes {1, 2, 3} is CrossChannel TRUE, {2, 3} FALSE.
    for cross, axes in ((True, [1, 2, 3]), (False, [2, 3])):
        fields = {"NormalizeVariance": True, "Epsilon": 1e-3}
        mvn = _operator(
            "MEAN_VARIANCE_NORMALIZATION",
            {"InputTensor": X, "OutputTensor": X},
            CrossChannel=cross,
            **fields,
        )
        mvn1 = _operator(
            "MEAN_VARIANCE_NORMALIZATION1",
            {"InputTensor": X, "OutputTensor": X},
            AxisCount=len(axes),
            Axes=axes,
            **fields,
        )
        for a, b in zip(
            _both(mvn, {"InputTensor": X}), _both(mvn1, {"InputTensor": X}), strict=True
        ):
            np.testing.assert_array_equal(a["OutputTensor"], b["OutputTensor"])


def test_mvn2_without_the_mean_is_rms_normalization() -> None:
    # Decision (UseMean is TBD on the page): the mean taken as 0, as onnxruntime's DirectML
    # provider runs SimplifiedLayerNormalization; UseVariance FALSE leaves the division out.
    x = X.astype(np.float64)
    rms = x / np.sqrt((x * x).mean(axis=(2, 3), keepdims=True) + 0.25)
    centered = x - x.mean(axis=(2, 3), keepdims=True)
    for use_mean, use_variance, expected in ((False, True, rms), (True, False, centered)):
        operator = _operator(
            "MEAN_VARIANCE_NORMALIZATION2",
            {"InputTensor": X, "OutputTensor": X},
            AxisCount=2,
            Axes=[2, 3],
            UseMean=use_mean,
            UseVariance=use_variance,
            Epsilon=0.25,
        )
        for result in _both(operator, {"InputTensor": X}):
            np.testing.assert_allclose(result["OutputTensor"], expected, rtol=RTOL, atol=1e-6)


def _per_channel(*values: float) -> np.ndarray:
    return np.array(values, np.float32).reshape(1, -1, 1, 1)


def test_batch_normalization_with_given_statistics() -> None:
    mean, variance = _per_channel(2, 1), _per_channel(4, 0.75)
    scale, bias = _per_channel(1, -2), _per_channel(0.5, 0)
    tensors = {
        "InputTensor": X,
        "MeanTensor": mean,
        "VarianceTensor": variance,
        "ScaleTensor": scale,
        "BiasTensor": bias,
    }
    operator = _operator(
        "BATCH_NORMALIZATION", {**tensors, "OutputTensor": X}, Spatial=True, Epsilon=0.25
    )
    expected = scale * (X - mean) / np.sqrt(variance + 0.25) + bias
    for result in _both(operator, tensors):
        np.testing.assert_allclose(result["OutputTensor"], expected, rtol=RTOL, atol=1e-6)


def test_batch_normalization_training_returns_the_population_statistics() -> None:
    scale, bias = _per_channel(2, 1), _per_channel(0, 1)
    addend = np.full(X.shape, 0.5, np.float32)
    tensors = {"InputTensor": X, "ScaleTensor": scale, "BiasTensor": bias}
    operator = _operator(
        "BATCH_NORMALIZATION_TRAINING",
        {
            **tensors,
            "FusedAddTensor": X,
            "OutputTensor": X,
            "OutputMeanTensor": scale,
            "OutputVarianceTensor": scale,
        },
        Epsilon=0.0,
    )
    x = X.astype(np.float64)
    mean = x.mean(axis=(0, 2, 3), keepdims=True)  # where ScaleTensor is 1
    variance = x.var(axis=(0, 2, 3), keepdims=True)
    expected = scale * (x - mean) / np.sqrt(variance) + bias + addend
    for result in _both(operator, {**tensors, "FusedAddTensor": addend}):
        np.testing.assert_allclose(result["OutputMeanTensor"], mean, rtol=RTOL)
        np.testing.assert_allclose(result["OutputVarianceTensor"], variance, rtol=RTOL)
        np.testing.assert_allclose(result["OutputTensor"], expected, rtol=RTOL, atol=1e-6)


def _gradient_case(name: str, mean: np.ndarray, variance: np.ndarray) -> tuple[Any, Any]:
    gradient = np.array(
        [[[[1, -1, 2, 0], [3, 1, -2, 1]], [[1, 1, 1, 1], [0, -1, 2, 4]]]], np.float32
    )
    scale = _per_channel(1.5, -1)
    tensors = {
        "InputTensor": X,
        "InputGradientTensor": gradient,
        "MeanTensor": mean,
        "VarianceTensor": variance,
        "ScaleTensor": scale,
    }
    outputs = {
        "OutputGradientTensor": X,
        "OutputScaleGradientTensor": scale,
        "OutputBiasGradientTensor": scale,
    }
    return _operator(name, {**tensors, **outputs}, Epsilon=0.5), tensors


def test_batch_normalization_grad_is_the_forward_gradient() -> None:
    operator, tensors = _gradient_case(
        "BATCH_NORMALIZATION_GRAD", _per_channel(1, 2), _per_channel(2, 3)
    )
    g, x, s = (
        tensors[k].astype(np.float64) for k in ("InputGradientTensor", "InputTensor", "ScaleTensor")
    )
    m, v = tensors["MeanTensor"], tensors["VarianceTensor"]
    deviation = np.sqrt(v + 0.5)
    expected = {
        "OutputGradientTensor": g * s / deviation,
        "OutputScaleGradientTensor": (g * (x - m) / deviation).sum(axis=(0, 2, 3), keepdims=True),
        "OutputBiasGradientTensor": g.sum(axis=(0, 2, 3), keepdims=True),
    }
    for result in _both(operator, tensors):
        for field, want in expected.items():
            np.testing.assert_allclose(result[field], want, rtol=RTOL, atol=1e-5)


def test_training_grad_with_the_batch_statistics_is_the_training_forward_s_gradient() -> None:
    # With the statistics the training operator returns for this input, the page's formulas
    # are that operator's gradient, which jax derives on its own here (in FLOAT64).
    x = X.astype(np.float64)
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    variance = x.var(axis=(0, 2, 3), keepdims=True)
    operator, tensors = _gradient_case(
        "BATCH_NORMALIZATION_TRAINING_GRAD", mean.astype(np.float32), variance.astype(np.float32)
    )
    g, s = tensors["InputGradientTensor"], tensors["ScaleTensor"]

    def forward(data: Any, weights: Any, shift: Any) -> Any:
        centred = data - data.mean(axis=(0, 2, 3), keepdims=True)
        spread = (centred * centred).mean(axis=(0, 2, 3), keepdims=True)
        return weights * centred / jnp.sqrt(spread + 0.5) + shift

    with jax.enable_x64(True):
        _, pull = jax.vjp(forward, jnp.asarray(x), jnp.asarray(s, jnp.float64), jnp.zeros(s.shape))
        want = [np.asarray(a) for a in pull(jnp.asarray(g, jnp.float64))]
    for result in _both(operator, tensors):
        for field, expected in zip(
            ("OutputGradientTensor", "OutputScaleGradientTensor", "OutputBiasGradientTensor"),
            want,
            strict=True,
        ):
            np.testing.assert_allclose(result[field], expected, rtol=1e-4, atol=1e-5)


# operator -> (a valid desc, {rule: change that breaks it alone})
SIZE_RULES: dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]] = {
    "MEAN_VARIANCE_NORMALIZATION1": (
        _operator(
            "MEAN_VARIANCE_NORMALIZATION1",
            {"InputTensor": X, "OutputTensor": X},
            AxisCount=2,
            Axes=[2, 3],
            NormalizeVariance=True,
            Epsilon=1e-5,
        ),
        {
            "C6": {"OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 2, 5]}},
            "C7": {"Axes": [2, 4]},
            "C8": {"Axes": [3, 3]},
        },
    ),
    "BATCH_NORMALIZATION": (
        _operator(
            "BATCH_NORMALIZATION",
            {
                "InputTensor": X,
                "MeanTensor": _per_channel(0, 0),
                "VarianceTensor": _per_channel(1, 1),
                "ScaleTensor": _per_channel(1, 1),
                "BiasTensor": _per_channel(0, 0),
                "OutputTensor": X,
            },
            Spatial=True,
            Epsilon=1e-5,
        ),
        {
            "C4": {"ScaleTensor": {"DataType": "FLOAT32", "Sizes": [1, 3, 1, 1]}},
            # below 4_0 Spatial FALSE needs the statistics' Height and Width
            "C5": {"Spatial": False},
        },
    ),
}


@pytest.mark.parametrize(
    ("name", "rule"),
    [(name, rule) for name, (_, changes) in SIZE_RULES.items() for rule in changes],
)
def test_size_rules_fire_by_id(name: str, rule: str) -> None:
    operator, changes = SIZE_RULES[name]
    level = "3_1" if rule == "C5" else "6_4"
    assert validate_operator(operator, level).valid
    broken = {**operator, "desc": {**operator["desc"], **changes[rule]}}
    assert validate_operator(broken, level).fired() == (f"{name}.{rule}",)
    if rule == "C5":  # deprecated from 4_0: no effect there
        assert validate_operator(broken, "4_0").valid


def test_the_bound_follows_the_statistics() -> None:
    x = np.array([[1.0, 2.0, 3.0, 6.0]])
    stats = normalization.moments(x, (1,))
    assert stats.count == 4 and stats.mean_abs[0, 0] == 3.0 and stats.mean_square[0, 0] == 12.5
    np.testing.assert_allclose(stats.variance, [[3.5]])
    allowance = normalization.normalized_allowance(
        x,
        stats.mean,
        stats.variance,
        0.5,
        mean_error=stats.mean_error(),
        variance_error=stats.variance_error(),
    )
    y = (x - 3) / np.sqrt(4.0)
    assert np.all(allowance >= normalization.ELEMENT_WISE_STEPS * np.abs(y))  # bound C / 6 >= |y|
    # |s| / sigma * ((n + 1) M1 + 6 (|x| + |m|)) + |x - m| (3n + 6) Q / (2 sigma^3)
    first = (5 * 3.0 + 6 * (1 + 3)) / 2 + 2 * 18 * 12.5 / (2 * 8)
    assert allowance[0, 0] == pytest.approx(first)
    # a set of equal values without Epsilon: the denominator is not known to be positive
    equal = normalization.moments(np.full((1, 4), 7.0), (1,))
    assert normalization.any_value(equal.variance, 0.0, equal.variance_error()).all()
    assert not normalization.any_value(stats.variance, 0.5, stats.variance_error()).any()


BROKEN = {
    "tests.normalization_backends:SampleVariance": (
        "MEAN_VARIANCE_NORMALIZATION",
        "MEAN_VARIANCE_NORMALIZATION1",
        "MEAN_VARIANCE_NORMALIZATION2",
        "BATCH_NORMALIZATION_TRAINING",
    ),
    "tests.normalization_backends:IgnoredEpsilon": ("BATCH_NORMALIZATION",),
    "tests.normalization_backends:UncenteredScaleGradient": (
        "BATCH_NORMALIZATION_GRAD",
        "BATCH_NORMALIZATION_TRAINING_GRAD",
    ),
}


@pytest.mark.parametrize(
    ("backend", "name"),
    sweep(
        [(b, name) for b, names in BROKEN.items() for name in names],
        [f"{b.rpartition(':')[2]}-{name}" for b, names in BROKEN.items() for name in names],
        kept=3,
    ),
)
def test_a_broken_backend_fails_drawn_cases(backend: str, name: str) -> None:
    # Quick: drawn cases through the suites' own check until one fails; the whole suites run
    # in the slow set below.
    broken = load_backend(backend)
    spec = catalog().operator(name)
    for seed in range(60):
        try:
            run_case(catalog(), spec, broken, draw_case(catalog(), spec, "6_4", seed))
        except CaseFailure:
            return
    pytest.fail(f"{backend} passed 60 {name} cases")


def test_a_one_pass_variance_passes_drawn_cases() -> None:
    # mean(x^2) - mean(x)^2 in FLOAT32 (onnxruntime's LayerNormalization): within the bound.
    honest = load_backend("tests.normalization_backends:OnePassVariance")
    for name in ("MEAN_VARIANCE_NORMALIZATION1", "BATCH_NORMALIZATION_TRAINING"):
        spec = catalog().operator(name)
        for seed in range(15):
            run_case(catalog(), spec, honest, draw_case(catalog(), spec, "6_4", seed))


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend",
    [
        "jax",
        "numpy",
        "onnxruntime",
        "tests.normalization_backends:OnePassVariance",
    ],
)
def test_the_normalization_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", *NORMALIZATIONS, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "support cells hit 412/412" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_the_suites_catch_a_broken_backend(backend: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", *BROKEN[backend], "--workers", "0")
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {t["operator"] for t in results["tests"] if t["outcome"] == "failed"}
    caught = set(BROKEN[backend])
    if backend.endswith("SampleVariance"):
        # MVN's ci suite (23 cases of 4-D tensors) does not catch it in its draw: a set holding
        # an edge value (NaN, an infinity, the largest float) is unjudged, one element's
        # variance is 0 either way, NormalizeVariance FALSE divides by nothing. Its drawn
        # cases catch it (test_a_broken_backend_fails_drawn_cases).
        caught.discard("MEAN_VARIANCE_NORMALIZATION")
    assert failed == caught
