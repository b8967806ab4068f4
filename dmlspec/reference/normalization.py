"""The normalization family, written from the DirectML pages: MEAN_VARIANCE_NORMALIZATION(1, 2),
BATCH_NORMALIZATION, BATCH_NORMALIZATION_TRAINING and both batch normalization gradients.

Each is computed in FLOAT64 from the pages' formulas, "Output = FusedActivation(Scale *
((Input - Mean) / sqrt(Variance + Epsilon)) + Bias)": the mean and the (population) variance of
each normalized set, Scale and Bias broadcast, then the FusedActivation, then one rounding to
the output type. The sets: MVN's {C, H, W} (CrossChannel) or {H, W}; MVN1's and MVN2's Axes;
BATCH_NORMALIZATION_TRAINING's and the gradients' dimensions where ScaleTensor (MeanTensor) is
1. MVN2's UseMean FALSE takes the mean as 0 (RMS normalization), UseVariance FALSE divides by
nothing. The gradients follow their pages' formulas directly (BATCH_NORMALIZATION_GRAD is not
derived from the forward operator here).

`EXACT` gives every output's FLOAT64 value (before the FusedActivation), its bound and the
largest intermediate, for the dot-product accuracy model: the means and variances by the
reductions' terms (bound mean|x|, mean(x^2)), the normalized outputs by the first-order bound
of dmlspec.normalization divided by the rule's KS; where that bound does not hold (Variance +
Epsilon not clearly positive, sums that may overflow), the intermediate is infinite, so any
result is accepted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import normalization as bound
from .element_wise import fused_activation
from .fields import Fields, Inputs, Operator, Outputs, comparison_terms
from .tensors import WriteLog

__all__ = ["EXACT", "NORMALIZATION", "UNDEFINED_NOTES"]

Exact = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _wide(x: Inputs, name: str, default: float | None = None) -> Any:
    if name not in x:
        return default
    return np.asarray(x[name], np.float64)


def _judged(
    value: np.ndarray, allowance: np.ndarray, anything: np.ndarray, terms: float, reach: Any
) -> Any:
    """(value, bound, intermediate): the allowance C as the bound C / KS; the intermediate the
    products' reach, infinite where any result is accepted."""
    with np.errstate(all="ignore"):
        reach = np.maximum(np.abs(value), reach)
        return value, allowance / terms, np.where(anything, np.inf, reach)


def _normalized(f: Fields, x: Inputs, axes: tuple[int, ...], centered: bool, divide: bool) -> Exact:
    """Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias over `axes`."""
    data = _wide(x, "InputTensor")
    scale, bias = _wide(x, "ScaleTensor", 1.0), _wide(x, "BiasTensor", 0.0)
    epsilon = f.float32("Epsilon")
    stats = bound.moments(data, axes, centered)
    with np.errstate(all="ignore"):
        value = data - stats.mean
        if divide:
            value = value / np.sqrt(stats.variance + epsilon)
        value = scale * value + bias
    allowance = stats.allowance(data, epsilon, scale, bias, centered=centered, divide=divide)
    if divide:
        anything = bound.any_value(
            stats.variance, epsilon, stats.variance_error(), stats.sums_overflow()
        )
        deviation = np.sqrt(stats.variance + epsilon)
    else:
        anything, deviation = stats.sums_overflow(), np.ones(())
    reach = bound.products_reach(scale, np.abs(data) + np.abs(stats.mean), 1 / deviation)
    return {"OutputTensor": _judged(value, allowance, anything, comparison_terms(f), reach)}


def _mean_variance_normalization(f: Fields, x: Inputs) -> Exact:
    axes = (1, 2, 3) if f.flag("CrossChannel") else (2, 3)
    return _normalized(f, x, axes, True, f.flag("NormalizeVariance"))


def _mean_variance_normalization1(f: Fields, x: Inputs) -> Exact:
    return _normalized(f, x, _axes(f), True, f.flag("NormalizeVariance"))


def _mean_variance_normalization2(f: Fields, x: Inputs) -> Exact:
    return _normalized(f, x, _axes(f), f.flag("UseMean"), f.flag("UseVariance"))


def _axes(f: Fields) -> tuple[int, ...]:
    return tuple(sorted(set(f.integers("Axes"))))


def _batch_normalization(f: Fields, x: Inputs) -> Exact:
    data = _wide(x, "InputTensor")
    mean, variance = _wide(x, "MeanTensor"), _wide(x, "VarianceTensor")
    scale, bias = _wide(x, "ScaleTensor"), _wide(x, "BiasTensor")
    epsilon = f.float32("Epsilon")
    with np.errstate(all="ignore"):
        value = scale * ((data - mean) / np.sqrt(variance + epsilon)) + bias
    allowance = bound.normalized_allowance(data, mean, variance, epsilon, scale, bias)
    anything = bound.any_value(variance, epsilon)
    reach = bound.products_reach(
        scale, np.abs(data) + np.abs(mean), 1 / np.sqrt(variance + epsilon)
    )
    return {"OutputTensor": _judged(value, allowance, anything, comparison_terms(f), reach)}


def _ones_of(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The dimensions a statistic of these sizes is taken over: where it is 1."""
    return tuple(i for i, n in enumerate(sizes) if n == 1)


def _batch_normalization_training(f: Fields, x: Inputs) -> Exact:
    data = _wide(x, "InputTensor")
    scale, bias = _wide(x, "ScaleTensor"), _wide(x, "BiasTensor")
    addend = _wide(x, "FusedAddTensor", 0.0)
    epsilon = f.float32("Epsilon")
    shape = f.sizes("ScaleTensor")
    stats = bound.moments(data, _ones_of(shape), True)
    with np.errstate(all="ignore"):
        value = scale * ((data - stats.mean) / np.sqrt(stats.variance + epsilon)) + bias + addend
    allowance = stats.allowance(data, epsilon, scale, bias, addend=addend)
    overflow = stats.sums_overflow()
    anything = bound.any_value(stats.variance, epsilon, stats.variance_error(), overflow)
    terms = comparison_terms(f)
    reach = bound.products_reach(
        scale, np.abs(data) + np.abs(stats.mean), 1 / np.sqrt(stats.variance + epsilon)
    )

    def statistic(value: np.ndarray, magnitude: np.ndarray) -> Any:
        reach = np.where(overflow, np.inf, magnitude)
        return tuple(np.asarray(a, np.float64).reshape(shape) for a in (value, magnitude, reach))

    return {
        "OutputTensor": _judged(value, allowance, anything, terms, reach),
        "OutputMeanTensor": statistic(stats.mean, stats.mean_abs),
        "OutputVarianceTensor": statistic(stats.variance, stats.mean_square),
    }


def _parameter_gradients(
    data: np.ndarray,
    gradient: np.ndarray,
    mean: np.ndarray,
    deviation: np.ndarray,
    axes: tuple[int, ...],
    shape: tuple[int, ...],
    anything: np.ndarray,
) -> Exact:
    """ "OutputScaleGradient = sum(InputGradient * (Input - Mean) / sqrt(Variance + Epsilon))",
    "OutputBiasGradient = sum(InputGradient)", the sums over `axes`."""
    with np.errstate(all="ignore"):
        terms = gradient * (data - mean) / deviation
        scale = terms.sum(axis=axes, keepdims=True)
        scale_bound = np.abs(terms).sum(axis=axes, keepdims=True)
        reach = bound.products_reach(gradient, data - mean, 1 / deviation)
        scale_reach = np.maximum(scale_bound, reach.sum(axis=axes, keepdims=True))
        bias = gradient.sum(axis=axes, keepdims=True)
        bias_bound = np.abs(gradient).sum(axis=axes, keepdims=True)
    undefined = np.broadcast_to(anything, scale.shape)
    return {
        "OutputScaleGradientTensor": tuple(
            a.reshape(shape) for a in (scale, scale_bound, np.where(undefined, np.inf, scale_reach))
        ),
        "OutputBiasGradientTensor": tuple(a.reshape(shape) for a in (bias, bias_bound, bias_bound)),
    }


def _gradient_inputs(f: Fields, x: Inputs) -> tuple[Any, ...]:
    data, gradient = _wide(x, "InputTensor"), _wide(x, "InputGradientTensor")
    mean, variance = _wide(x, "MeanTensor"), _wide(x, "VarianceTensor")
    scale = _wide(x, "ScaleTensor")
    epsilon = f.float32("Epsilon") if f.present("Epsilon") else 0.0
    shape = f.sizes("MeanTensor")
    return data, gradient, mean, variance, scale, epsilon, shape, _ones_of(shape)


def _batch_normalization_grad(f: Fields, x: Inputs) -> Exact:
    """ "OutputGradient = InputGradient * (Scale / sqrt(Variance + Epsilon))"."""
    data, gradient, mean, variance, scale, epsilon, shape, axes = _gradient_inputs(f, x)
    with np.errstate(all="ignore"):
        deviation = np.sqrt(variance + epsilon)
        value = gradient * (scale / deviation)
    anything = bound.any_value(variance, epsilon)
    reach = np.maximum(np.abs(value), bound.products_reach(gradient, scale, 1 / deviation))
    return {
        "OutputGradientTensor": (value, np.abs(value), np.where(anything, np.inf, reach)),
        **_parameter_gradients(data, gradient, mean, deviation, axes, shape, anything),
    }


def _batch_normalization_training_grad(f: Fields, x: Inputs) -> Exact:
    """The page's OutputGradient: Coef0 = 1 / sqrt(Variance + Epsilon), Coef1 = InputGradient *
    (Input - mean(Input)), OutputGradient = Scale * Coef0 * (InputGradientCentered -
    InputCentered * mean(Coef1) / (Variance + Epsilon)), the means over MeanTensor's
    dimensions of size 1."""
    data, gradient, mean, variance, scale, epsilon, shape, axes = _gradient_inputs(f, x)
    with np.errstate(all="ignore"):
        w = variance + epsilon
        coef0 = 1 / np.sqrt(w)
        centered = data - data.mean(axis=axes, keepdims=True)
        coef1 = gradient * centered
        gradient_centered = gradient - gradient.mean(axis=axes, keepdims=True)
        value = (
            scale
            * coef0
            * (gradient_centered - centered * coef1.mean(axis=axes, keepdims=True) / w)
        )
    allowance = bound.training_gradient_allowance(data, gradient, variance, epsilon, scale, axes)
    anything = bound.any_value(variance, epsilon)
    terms = comparison_terms(f, "OutputGradientTensor")
    with np.errstate(all="ignore"):  # the sum of g * xc, then the products after it
        summed = np.abs(coef1).sum(axis=axes, keepdims=True)
        reach = bound.products_reach(
            scale, coef0, np.abs(gradient_centered) + np.abs(centered), summed, 1 / w
        )
    return {
        "OutputGradientTensor": _judged(value, allowance, anything, terms, reach),
        **_parameter_gradients(data, gradient, mean, np.sqrt(w), axes, shape, anything),
    }


EXACT = {
    "MEAN_VARIANCE_NORMALIZATION": _mean_variance_normalization,
    "MEAN_VARIANCE_NORMALIZATION1": _mean_variance_normalization1,
    "MEAN_VARIANCE_NORMALIZATION2": _mean_variance_normalization2,
    "BATCH_NORMALIZATION": _batch_normalization,
    "BATCH_NORMALIZATION_TRAINING": _batch_normalization_training,
    "BATCH_NORMALIZATION_GRAD": _batch_normalization_grad,
    "BATCH_NORMALIZATION_TRAINING_GRAD": _batch_normalization_training_grad,
}


def _rounded(name: str) -> Operator:
    """The operator as the reference runs it: exact, OutputTensor activated, rounded once."""

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            with np.errstate(all="ignore"):
                if field == "OutputTensor":
                    value = fused_activation(name, f.desc.get("FusedActivation"), value)
                outputs[field] = np.asarray(value).astype(f.dtype(field))
        return outputs

    return run


NORMALIZATION: dict[str, Operator] = {name: _rounded(name) for name in EXACT}

UNDEFINED_NOTES: dict[str, str] = {}
