"""The normalization family as JAX: MEAN_VARIANCE_NORMALIZATION(1, 2), BATCH_NORMALIZATION,
BATCH_NORMALIZATION_TRAINING and both batch normalization gradients; one table of functions,
one primitive that runs them.

`normalization` is the primitive their specs name. Every forward operator is one family
function, `normalize`: the mean and variance over a set of axes (or given statistics),
Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias, then the FusedActivation. The
operators differ only in how they name the axes (MVN's CrossChannel, MVN1's and MVN2's Axes,
BATCH_NORMALIZATION_TRAINING's ScaleTensor's dimensions of size 1) and in their flags. Floats
are computed in FLOAT32 (FLOAT16 too, as DirectML accumulates unless half precision is
allowed) and rounded once to the output type; the variance is taken about the mean (two
passes). BATCH_NORMALIZATION_GRAD is BATCH_NORMALIZATION's jax.vjp with respect to the input,
scale and bias (its page's three formulas are that gradient); BATCH_NORMALIZATION_TRAINING_GRAD
follows its page's formulas, which mix the given statistics with the input's own mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .element_wise import fused_activation
from .indexing import member

__all__ = ["FUNCTIONS", "normalization", "normalize"]

Array = jax.Array
Activation = tuple[tuple[str, Any], ...] | None


def _wide(value: Array) -> Array:
    """In the accumulation type: FLOAT32 (FLOAT64 stays)."""
    return value.astype(jnp.float64 if value.dtype == jnp.float64 else jnp.float32)


def _maybe_wide(value: Array | None) -> Array | None:
    return None if value is None else _wide(value)


def _sum(x: Array, axes: tuple[int, ...]) -> Array:
    """The sum over `axes`, kept as size-1 dimensions: one lax.reduce_sum (jnp.sum and jnp.mean
    trace through nested jits, most of a small program's tracing here)."""
    if not axes:
        return x
    kept = [1 if i in axes else n for i, n in enumerate(x.shape)]
    return lax.reduce_sum(x, axes).reshape(kept)


def _mean(x: Array, axes: tuple[int, ...]) -> Array:
    count = math.prod(x.shape[a] for a in axes)
    return _sum(x, axes) / jnp.asarray(count, x.dtype)


def _moments(x: Array, axes: tuple[int, ...], centered: bool) -> tuple[Array, Array]:
    """The mean (0 where not centred) and the variance about it over `axes`, kept as size-1
    dimensions."""
    mean = _mean(x, axes) if centered else jnp.zeros((), x.dtype)
    deviation = x - mean
    return mean, _mean(deviation * deviation, axes)


def normalize(
    x: Array,
    scale: Array | None,
    bias: Array | None,
    *,
    axes: tuple[int, ...] | None = None,
    mean: Array | None = None,
    variance: Array | None = None,
    epsilon: float,
    centered: bool = True,
    divide: bool = True,
    addend: Array | None = None,
) -> tuple[Array, Array, Array]:
    """The family primitive, in the accumulation type: Scale * (x - Mean) / sqrt(Variance +
    Epsilon) + Bias + addend, the statistics over `axes` (or the given `mean` and `variance`),
    and those statistics. Without `centered` the mean is 0; without `divide` nothing divides."""
    if axes is not None:
        mean, variance = _moments(x, axes, centered)
    assert mean is not None and variance is not None
    result = x - mean
    if divide:
        result = result * _reciprocal_sqrt(variance + jnp.asarray(epsilon, x.dtype))
    if scale is not None:
        result = result * scale
    if bias is not None:
        result = result + bias
    if addend is not None:
        result = result + addend
    return result, mean, variance


def _reciprocal_sqrt(value: Array) -> Array:
    """1 / sqrt(value), as one division of a square root (XLA's rsqrt is exact to about an ULP
    on CPUs, and the model allows one rounding for each)."""
    return 1 / lax.sqrt(value)


def _finish(result: Array, activation: Activation, output_type: str) -> Array:
    if activation:
        result = fused_activation(result, activation)
    return result.astype(output_type)


def _mean_variance_normalization(
    x: Array, scale: Array | None, bias: Array | None, *, cross_channel: bool, **rest: Any
) -> Array:
    """CrossChannel: over {C, H, W}; otherwise over {H, W} (the page's two choices)."""
    axes = (1, 2, 3) if cross_channel else (2, 3)
    return _mean_variance_normalization1(x, scale, bias, axes=axes, **rest)


def _mean_variance_normalization1(
    x: Array,
    scale: Array | None,
    bias: Array | None,
    *,
    normalize_variance: bool,
    **rest: Any,
) -> Array:
    """MVN2 with the mean, NormalizeVariance its UseVariance."""
    return _mean_variance_normalization2(
        x, scale, bias, use_mean=True, use_variance=normalize_variance, **rest
    )


def _mean_variance_normalization2(
    x: Array,
    scale: Array | None,
    bias: Array | None,
    *,
    axes: tuple[int, ...],
    use_mean: bool,
    use_variance: bool,
    epsilon: float,
    output_type: str,
    activation: Activation = None,
) -> Array:
    """UseMean FALSE: the mean taken as 0 (the variance is then the mean of the squares, RMS
    normalization); UseVariance FALSE: no division."""
    result, _, _ = normalize(
        _wide(x),
        _maybe_wide(scale),
        _maybe_wide(bias),
        axes=tuple(int(a) for a in axes),
        epsilon=epsilon,
        centered=bool(use_mean),
        divide=bool(use_variance),
    )
    return _finish(result, activation, output_type)


def _batch_normalization(
    x: Array,
    mean: Array,
    variance: Array,
    scale: Array,
    bias: Array,
    *,
    epsilon: float,
    output_type: str,
    activation: Activation = None,
) -> Array:
    result, _, _ = normalize(
        _wide(x),
        _maybe_wide(scale),
        _maybe_wide(bias),
        mean=_wide(mean),
        variance=_wide(variance),
        epsilon=epsilon,
    )
    return _finish(result, activation, output_type)


def _ones_of(statistic: Array) -> tuple[int, ...]:
    """The axes a statistic of this shape is taken over: its dimensions of size 1."""
    return tuple(i for i, n in enumerate(statistic.shape) if n == 1)


def _batch_normalization_training(
    x: Array,
    scale: Array,
    bias: Array,
    addend: Array | None,
    *,
    epsilon: float,
    output_type: str,
    activation: Activation = None,
) -> tuple[Array, Array, Array]:
    """The statistics over ScaleTensor's dimensions of size 1, returned in its shape."""
    result, mean, variance = normalize(
        _wide(x),
        _maybe_wide(scale),
        _maybe_wide(bias),
        axes=_ones_of(scale),
        epsilon=epsilon,
        addend=_maybe_wide(addend),
    )
    return (
        _finish(result, activation, output_type),
        mean.reshape(scale.shape).astype(output_type),
        variance.reshape(scale.shape).astype(output_type),
    )


def _batch_normalization_grad(
    x: Array,
    gradient: Array,
    mean: Array,
    variance: Array,
    scale: Array,
    *,
    epsilon: float,
    output_type: str,
) -> tuple[Array, Array, Array]:
    """BATCH_NORMALIZATION's vjp: the input's, the scale's and the bias's gradients (the
    latter two summed over the statistics' dimensions of size 1 by the broadcast's vjp)."""
    wide_mean, wide_variance = _wide(mean), _wide(variance)

    def forward(data: Array, weights: Array, shift: Array) -> Array:
        result, _, _ = normalize(
            data, weights, shift, mean=wide_mean, variance=wide_variance, epsilon=epsilon
        )
        return result

    wide_scale = _wide(scale)
    _, pull = jax.vjp(forward, _wide(x), wide_scale, jnp.zeros_like(wide_scale))
    input_gradient, scale_gradient, bias_gradient = pull(_wide(gradient))
    return (
        input_gradient.astype(output_type),
        scale_gradient.astype(output_type),
        bias_gradient.astype(output_type),
    )


def _batch_normalization_training_grad(
    x: Array,
    gradient: Array,
    mean: Array,
    variance: Array,
    scale: Array,
    *,
    epsilon: float,
    output_type: str,
) -> tuple[Array, Array, Array]:
    """The page's formulas: Coef0 = 1 / sqrt(Variance + Epsilon), the input's and the
    gradient's own means over MeanTensor's dimensions of size 1; the scale's gradient with the
    given Mean, as BATCH_NORMALIZATION_GRAD's."""
    data, g = _wide(x), _wide(gradient)
    wide_mean, wide_variance, wide_scale = _wide(mean), _wide(variance), _wide(scale)
    axes = _ones_of(mean)
    w = wide_variance + jnp.asarray(epsilon, data.dtype)
    coef0 = _reciprocal_sqrt(w)
    centered = data - _mean(data, axes)
    gradient_centered = g - _mean(g, axes)
    coef1 = _mean(g * centered, axes)
    output = wide_scale * coef0 * (gradient_centered - centered * coef1 / w)
    scale_gradient = _sum(g * (data - wide_mean) * coef0, axes)
    bias_gradient = _sum(g, axes)
    return (
        output.astype(output_type),
        scale_gradient.reshape(mean.shape).astype(output_type),
        bias_gradient.reshape(mean.shape).astype(output_type),
    )


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "MEAN_VARIANCE_NORMALIZATION": _mean_variance_normalization,
    "MEAN_VARIANCE_NORMALIZATION1": _mean_variance_normalization1,
    "MEAN_VARIANCE_NORMALIZATION2": _mean_variance_normalization2,
    "BATCH_NORMALIZATION": _batch_normalization,
    "BATCH_NORMALIZATION_TRAINING": _batch_normalization_training,
    "BATCH_NORMALIZATION_GRAD": _batch_normalization_grad,
    "BATCH_NORMALIZATION_TRAINING_GRAD": _batch_normalization_training_grad,
}


def normalization(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no normalization function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
