"""The optimizers, written from the DirectML pages; so far ADAM_OPTIMIZER, the page's formulas
in FLOAT64 element by element.

`EXACT` gives each output's FLOAT64 value, its bound and the largest intermediate for the
dot-product accuracy model (the spec's comparison notes): the moments are two-term dot products
(bound |Beta M| + |1 - Beta| |G| or G^2); the parameters' bound is |X - U| + cU |U|, cU the
update's relative error in units of u, propagated through the formula by condition numbers
(the moments' own bounds, the powers' |ln Beta^T| + 4, the cancellations in 1 - Beta^T and in
sqrt(V) + Epsilon).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .divisive_normalization import _TINY_OVER_U, _ratio
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["EXACT", "OPTIMIZER"]

Exact = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _one_minus_power(beta: float, step: float) -> tuple[float, float, float]:
    """1 - beta^step, its relative error in units of u (the power's |ln beta^step| + 4, scaled
    by the cancellation beta^step / |1 - beta^step|, plus the subtraction's own) and
    beta^step."""
    power = np.power(np.float64(beta), step)
    own = abs(np.log(power)) + 4 if power > 0 else 4.0
    return float(1 - power), float(_ratio(own * power, abs(1 - power))) + 1, float(power)


def _adam_exact(f: Fields, x: Inputs) -> Exact:
    wide = {k: np.asarray(v).astype(np.float64) for k, v in x.items()}
    params, m, v = (
        wide[k]
        for k in ("InputParametersTensor", "InputFirstMomentTensor", "InputSecondMomentTensor")
    )
    g = wide["GradientTensor"]
    step = float(wide["TrainingStepTensor"].reshape(-1)[0])
    rate, beta1, beta2, epsilon = (
        f.float32(name) for name in ("LearningRate", "Beta1", "Beta2", "Epsilon")
    )
    first = beta1 * m + (1 - beta1) * g
    first_bound = np.abs(beta1 * m) + abs(1 - beta1) * np.abs(g)
    second = beta2 * v + (1 - beta2) * g * g
    second_bound = np.abs(beta2 * v) + abs(1 - beta2) * g * g
    low2, error2, _ = _one_minus_power(beta2, step)
    low1, error1, _ = _one_minus_power(beta1, step)
    alpha = np.sqrt(low2) / low1
    root = np.sqrt(second)
    divisor = root + epsilon
    update = rate * alpha * first / divisor
    result = params - update
    # The update's relative error in units of u; the first moment's as an absolute error. A
    # moment's error is at most KS * max(bound * u, tiny) (its rule): below FLOAT32's normal
    # range the floor, tiny / u, stands in for its bound.
    first_floor = np.maximum(first_bound, _TINY_OVER_U)
    root_error = 2 * _ratio(np.maximum(second_bound, _TINY_OVER_U), second) + 1
    divisor_error = _ratio(root_error * root, np.abs(divisor)) + 1
    alpha_error = error2 / 2 + 1 + error1 + 1
    update_error = np.abs(update) * (alpha_error + divisor_error + 3) + 3 * first_floor * np.abs(
        rate * alpha / divisor
    )
    bound = np.abs(result) + update_error
    largest = np.maximum.reduce(
        [
            np.abs(a)
            for a in (
                params,
                update,
                second_bound,  # G * G: the second moment's overflow reaches the update
                rate * alpha * first,
                alpha * first,
                first / divisor,
            )
        ]
    )
    return {
        "OutputParametersTensor": (result, bound, largest),
        "OutputFirstMomentTensor": (first, first_bound, first_bound),
        "OutputSecondMomentTensor": (second, second_bound, second_bound),
    }


EXACT = {"ADAM_OPTIMIZER": _adam_exact}


def _adam(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    outputs: dict[str, Any] = {}
    for field, (value, _, _) in _adam_exact(f, x).items():
        outputs[field] = value.astype(f.dtype(field))
    return outputs


OPTIMIZER: dict[str, Operator] = {"ADAM_OPTIMIZER": _adam}
