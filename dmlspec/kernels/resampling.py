"""The resampling family as JAX: RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3, UPSAMPLE_2D and the
gradients RESAMPLE_GRAD and RESAMPLE_GRAD1 (jax.vjp of the forward resampling), one table of
functions and the primitive `resampling` that runs them.

Each is one separable resampling, dimension by dimension: the elements each output element
reads along a dimension and their weights are found on the host (NumPy, FLOAT64, from the static
scales and offsets: c = (x - OutputPixelOffset) / Scale - InputPixelOffset, clamped to the
edges), then applied with gathers (`jnp.take`). NEAREST_NEIGHBOR gathers one element
(exact); LINEAR sums the weighted elements in FLOAT32 (FLOAT16 widened), weights rounded to
FLOAT32, one dimension after another, and rounds once to the output type (INT8 and UINT8 to
the nearest, saturated). RESAMPLE3's antialiasing stretches the linear filter by 1 / Scale
where 1 / Scale > 2 and normalizes its weights.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .indexing import member

__all__ = ["FUNCTIONS", "resampling"]

Array = jax.Array


def _axis(
    inputs: int,
    outputs: int,
    scale: float,
    input_offset: float,
    output_offset: float,
    *,
    linear: bool,
    rounding: str,
    antialiased: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Per output element along one dimension: the input elements read {outputs, taps} and
    their weights."""
    c = (np.arange(outputs, dtype=np.float64) - output_offset) / scale - input_offset
    if not linear:
        chosen = {"FLOOR": np.floor(c), "CEIL": np.ceil(c)}.get(rounding, np.floor(c + 0.5))
        indices, weights = chosen[:, None], np.ones((outputs, 1))
    elif antialiased and 1.0 / scale > 2.0:
        k = 1.0 / scale
        reach = int(np.ceil(k))
        indices = np.floor(c)[:, None] + np.arange(1 - reach, reach + 1)[None, :]
        raw = np.maximum(0.0, 1.0 - np.abs(indices - c[:, None]) / k)
        weights = raw / raw.sum(axis=1, keepdims=True)
    else:
        low = np.floor(c)
        indices = np.stack([low, low + 1], axis=1)
        weights = np.stack([1.0 - (c - low), c - low], axis=1)
    return np.clip(indices, 0, inputs - 1).astype(np.int32), weights


def _resampled(
    x: Array,
    *,
    interpolation_mode: str,
    scales: tuple[float, ...],
    input_offsets: tuple[float, ...],
    output_offsets: tuple[float, ...],
    rounding: str,
    antialiased: bool,
    output_sizes: tuple[int, ...],
    output_type: Any,
) -> Array:
    linear = member(interpolation_mode, "DML_INTERPOLATION_MODE_") == "LINEAR"
    wide = jnp.float64 if x.dtype == jnp.float64 else jnp.float32
    result = x if not linear else x.astype(wide)
    for d, outputs in enumerate(output_sizes):
        scale = float(np.float32(scales[d]))
        indices, weights = _axis(
            x.shape[d],
            outputs,
            scale,
            float(np.float32(input_offsets[d])),
            float(np.float32(output_offsets[d])),
            linear=linear,
            rounding=rounding,
            antialiased=antialiased,
        )
        if not linear:
            result = jnp.take(result, jnp.asarray(indices[:, 0]), axis=d)
            continue
        shape = [1] * result.ndim
        shape[d] = outputs
        total = None
        for tap in range(indices.shape[1]):
            weight = jnp.asarray(weights[:, tap], wide).reshape(shape)
            term = jnp.take(result, jnp.asarray(indices[:, tap]), axis=d) * weight
            total = term if total is None else total + term
        assert total is not None
        result = total
    if not linear:
        return result
    if jnp.issubdtype(jnp.dtype(output_type), jnp.integer):
        limits = np.iinfo(np.dtype(output_type))
        result = jnp.clip(jnp.round(result), limits.min, limits.max)
    return result.astype(output_type)


def _rounding(rounding_direction: str | None) -> str:
    if rounding_direction is None:
        return "HALF_UP"
    decreasing = member(rounding_direction, "DML_AXIS_DIRECTION_") == "DECREASING"
    return "FLOOR" if decreasing else "CEIL"


def _resample(
    x: Array,
    *,
    interpolation_mode: str,
    scales: tuple[float, ...],
    output_sizes: tuple[int, ...],
    output_type: Any,
    input_pixel_offsets: tuple[float, ...] | None = None,
    output_pixel_offsets: tuple[float, ...] | None = None,
    rounding_direction: str | None = None,
    antialiased: bool = False,
) -> Array:
    """RESAMPLE (pixel centres: offsets 0.5 and -0.5), RESAMPLE1 (its offsets, halves rounded
    up), RESAMPLE2 (and RoundingDirection), RESAMPLE3 (and Antialiased)."""
    rank = len(output_sizes)
    return _resampled(
        x,
        interpolation_mode=interpolation_mode,
        scales=scales,
        input_offsets=input_pixel_offsets or (0.5,) * rank,
        output_offsets=output_pixel_offsets or (-0.5,) * rank,
        rounding=_rounding(rounding_direction),
        antialiased=bool(antialiased),
        output_sizes=output_sizes,
        output_type=output_type,
    )


def _upsample_2d(
    x: Array,
    *,
    interpolation_mode: str,
    scale_size: Any,
    output_sizes: tuple[int, ...],
    output_type: Any,
) -> Array:
    """RESAMPLE with the scales {1, ..., ScaleSize.Height, ScaleSize.Width}."""
    size: Mapping[str, int] = dict(scale_size)
    scales = (1.0,) * (len(output_sizes) - 2) + (float(size["Height"]), float(size["Width"]))
    return _resample(
        x,
        interpolation_mode=interpolation_mode,
        scales=scales,
        output_sizes=output_sizes,
        output_type=output_type,
    )


def _resample_grad(
    dy: Array,
    *,
    interpolation_mode: str,
    scales: tuple[float, ...],
    input_pixel_offsets: tuple[float, ...],
    output_pixel_offsets: tuple[float, ...],
    output_sizes: tuple[int, ...],
    output_type: Any,
    rounding_direction: str | None = None,
) -> Array:
    """RESAMPLE_GRAD (of RESAMPLE1) and RESAMPLE_GRAD1 (of RESAMPLE2): the forward resampling's
    vector-Jacobian product (jax.vjp) in FLOAT32, from OutputGradientTensor's sizes (the forward
    input's) to InputGradientTensor's (the forward output's)."""
    wide = jnp.float64 if dy.dtype == jnp.float64 else jnp.float32

    def forward(x: Array) -> Array:
        return _resample(
            x,
            interpolation_mode=interpolation_mode,
            scales=scales,
            output_sizes=tuple(dy.shape),
            output_type=wide,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
            rounding_direction=rounding_direction,
        )

    _, pullback = jax.vjp(forward, jnp.zeros(output_sizes, wide))
    (gradient,) = pullback(dy.astype(wide))
    result: Array = gradient.astype(output_type)
    return result


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "RESAMPLE": _resample,
    "RESAMPLE1": _resample,
    "RESAMPLE2": _resample,
    "RESAMPLE3": _resample,
    "UPSAMPLE_2D": _upsample_2d,
    "RESAMPLE_GRAD": _resample_grad,
    "RESAMPLE_GRAD1": _resample_grad,
}


def resampling(x: Array, *, function: str, **parameters: Any) -> Array:
    """Run one operator of the family on its input (a gradient's incoming gradient), static
    parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no resampling function {function!r} (known: {sorted(FUNCTIONS)})")
    result: Array = FUNCTIONS[name](x, **parameters)
    return result
