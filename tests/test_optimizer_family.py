"""The optimizers (ADAM_OPTIMIZER): the page's formulas worked by hand on dmlspec's kernel and the
NumPy reference, the undefined-result rules (the step count, Beta1 = 1) by id, onnxruntime
declining it with the reason; the generated suite passes and a backend leaving out the bias
correction is caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.conformance.cases import draw_case
from dmlspec.conformance.check import CaseFailure, run_case
from dmlspec.conformance.suite import catalog
from dmlspec.errors import Unsupported
from dmlspec.validation import check_requires, validate_operator

from .test_conformance import conformance

SHAPE = [1, 1, 1, 2]
TENSORS = (
    "InputParametersTensor",
    "InputFirstMomentTensor",
    "InputSecondMomentTensor",
    "GradientTensor",
    "OutputParametersTensor",
    "OutputFirstMomentTensor",
    "OutputSecondMomentTensor",
)


def _adam(**fields: Any) -> dict[str, Any]:
    desc: dict[str, Any] = {name: {"DataType": "FLOAT32", "Sizes": SHAPE} for name in TENSORS}
    desc["TrainingStepTensor"] = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1]}
    desc.update({"LearningRate": 0.1, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 0.0, **fields})
    return {"type": "DML_OPERATOR_ADAM_OPTIMIZER", "desc": desc}


def _inputs(step: float, **data: list[float]) -> dict[str, np.ndarray]:
    inputs = {
        name: np.array(data.get(name, [0.0, 0.0]), np.float32).reshape(SHAPE)
        for name in TENSORS[:4]
    }
    inputs["TrainingStepTensor"] = np.full((1, 1, 1, 1), step, np.float32)
    return inputs


def test_the_first_step_moves_each_parameter_by_the_learning_rate() -> None:
    # From zero moments at T = 1: M = 0.1 G, V = 0.001 G^2, Alpha = sqrt(0.001) / 0.1, so
    # LearningRate * Alpha * M / sqrt(V) = LearningRate * sign(G) (Epsilon 0).
    inputs = _inputs(1, InputParametersTensor=[1, -1], GradientTensor=[0.5, -2])
    for outputs in (reference.run(_adam(), inputs), ops.run(_adam(), inputs)):
        first = outputs["OutputFirstMomentTensor"].reshape(-1)
        np.testing.assert_allclose(first, [0.05, -0.2], rtol=1e-6)
        second = (1 - float(np.float32(0.999))) * np.array([0.25, 4])  # Beta2 as FLOAT
        np.testing.assert_allclose(
            outputs["OutputSecondMomentTensor"].reshape(-1), second, rtol=1e-6
        )
        np.testing.assert_allclose(
            outputs["OutputParametersTensor"].reshape(-1), [0.9, -0.9], rtol=1e-6
        )


def test_a_later_step_follows_the_page_s_formulas() -> None:
    data = {
        "InputParametersTensor": [0.5, 2.0],
        "InputFirstMomentTensor": [0.2, -0.1],
        "InputSecondMomentTensor": [0.04, 0.5],
        "GradientTensor": [-1.0, 3.0],
    }
    step, rate, b1, b2, eps = 10, 0.01, 0.8, 0.99, 1e-3
    x, m, v, g = (np.array(data[name]) for name in TENSORS[:4])
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    alpha = np.sqrt(1 - b2**step) / (1 - b1**step)
    expected = x - rate * alpha * m / (np.sqrt(v) + eps)
    operator = _adam(LearningRate=rate, Beta1=b1, Beta2=b2, Epsilon=eps)
    for outputs in (
        reference.run(operator, _inputs(step, **data)),
        ops.run(operator, _inputs(step, **data)),
    ):
        np.testing.assert_allclose(
            outputs["OutputParametersTensor"].reshape(-1), expected, rtol=1e-6
        )
        np.testing.assert_allclose(outputs["OutputFirstMomentTensor"].reshape(-1), m, rtol=1e-6)
        np.testing.assert_allclose(outputs["OutputSecondMomentTensor"].reshape(-1), v, rtol=1e-6)


@pytest.mark.parametrize(
    ("step", "fields", "rule"),
    [(0, {}, "R1"), (2.5, {}, "R1"), (3, {"Beta1": 1.0}, "R2")],
)
def test_the_parameters_are_undefined_where_the_correction_is(
    step: float, fields: dict[str, Any], rule: str
) -> None:
    operator = _adam(**fields)
    assert validate_operator(operator).valid
    report = check_requires(operator, _inputs(step))
    assert [v.constraint for v in report.violations] == [f"ADAM_OPTIMIZER.{rule}"]
    assert report.undefined["OutputParametersTensor"].all()
    assert "OutputFirstMomentTensor" not in report.undefined
    assert check_requires(_adam(), _inputs(3)).satisfied


def test_beta_ranges_and_the_scalar_step_are_size_rules() -> None:
    assert validate_operator(_adam(Beta2=1.5)).fired() == ("ADAM_OPTIMIZER.C6",)
    wide = _adam()
    wide["desc"]["TrainingStepTensor"]["Sizes"] = [1, 1, 1, 2]
    assert validate_operator(wide).fired() == ("ADAM_OPTIMIZER.C4",)


def test_onnxruntime_declines_adam_with_the_reason() -> None:
    pytest.importorskip("onnxruntime")
    from dmlspec.backends.onnxruntime import OnnxRuntimeBackend

    with pytest.raises(Unsupported, match="registers no Adam operator"):
        OnnxRuntimeBackend().run(_adam(), _inputs(1))


BROKEN = "tests.optimizer_backends:UncorrectedAdam"


def test_a_backend_without_the_bias_correction_fails_drawn_cases() -> None:
    broken = load_backend(BROKEN)
    spec = catalog().operator("ADAM_OPTIMIZER")
    for seed in range(40):
        try:
            run_case(catalog(), spec, broken, draw_case(catalog(), spec, "6_4", seed))
        except CaseFailure:
            return
    pytest.fail(f"{BROKEN} passed 40 cases")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy"])
def test_the_optimizer_suite_passes(backend: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", "ADAM_OPTIMIZER", "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "support cells hit 24/24" in run.stdout


@pytest.mark.slow
def test_the_suite_catches_the_uncorrected_update(tmp_path: Path) -> None:
    run = conformance(BROKEN, tmp_path, "--ops", "ADAM_OPTIMIZER", "--workers", "0")
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert {t["operator"] for t in results["tests"] if t["outcome"] == "failed"} == {
        "ADAM_OPTIMIZER"
    }
