"""The normalization family for the onnxruntime backend, in FLOAT32 (FLOAT16 widened first, as
DirectML accumulates): MEAN_VARIANCE_NORMALIZATION(1, 2) as InstanceNormalization (the sets
{H, W, ...} of each batch and channel), LayerNormalization (any other run of trailing axes) or
MeanVarianceNormalization (other axes, where Epsilon is 0); BATCH_NORMALIZATION as
BatchNormalization and BATCH_NORMALIZATION_TRAINING as BatchNormalization's training mode where
the statistics are per channel (dimension 1); the gradients, and every desc the ONNX operators
cannot express, as graphs of the pages' formulas (ReduceMean, ReduceSum and element-wise nodes).
The normalized result is scaled by ScaleTensor and BiasTensor afterwards (the ONNX operators get
ones and zeros), since DirectML's may broadcast along normalized axes too.

Divergences, each handled here:
- ONNX MeanVarianceNormalization has no epsilon (its function adds 1e-9 to the deviation): it
  runs only descs whose Epsilon is 0, where the two differ only for a set of equal values,
  which DirectML divides by 0 (the accuracy model accepts any result there).
- ONNX's normalizations always centre and divide: NormalizeVariance or UseVariance FALSE and
  MVN2's UseMean FALSE (RMS normalization; ONNX's RMSNormalization is opset 23) are graphs.
- BatchNormalization takes 1-D statistics of the channel dimension and an input of rank 2 or
  more; its training mode (momentum 0, so its running statistics are the batch's, the
  population variance) reduces over every other dimension. Other shapes are graphs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .graph import Call, run_operator

__all__ = ["OPERATORS", "run"]

_WIDE = np.float32


def _wide(c: Call, field: str) -> str:
    return c.g.cast(c.feed(field), _WIDE)


def _reduce(c: Call, op_type: str, value: str, axes: tuple[int, ...]) -> str:
    """ReduceMean or ReduceSum over `axes`, kept as size-1 dimensions (none: the value)."""
    if not axes:
        return value
    return c.g.op(op_type, value, c.g.int64(list(axes)), keepdims=1)


def _epsilon(c: Call) -> float:
    return float(np.float32(c.desc.get("Epsilon", 0.0)))


def _scaled(c: Call, value: str) -> str:
    """ScaleTensor and BiasTensor, where given, broadcast onto `value`."""
    g = c.g
    if c.given("ScaleTensor"):
        value = g.op("Mul", value, _wide(c, "ScaleTensor"))
    if c.given("BiasTensor"):
        value = g.op("Add", value, _wide(c, "BiasTensor"))
    return value


def _channel_vector(c: Call, field: str, channels: int) -> str:
    """A per-channel statistic ({1, C, 1, ...} or all 1s) as BatchNormalization's 1-D {C}."""
    g = c.g
    flat = g.reshape(_wide(c, field), [-1])
    return g.op("Expand", flat, g.int64([channels]))


def _per_channel(c: Call, fields: tuple[str, ...]) -> bool:
    """Whether InputTensor has a channel dimension and every statistic is 1 elsewhere and the
    input's size (or 1) along it: what BatchNormalization takes."""
    sizes = c.sizes("InputTensor")
    if len(sizes) < 2:
        return False
    for field in fields:
        stat = c.sizes(field)
        if any(n != 1 for i, n in enumerate(stat) if i != 1) or stat[1] not in (1, sizes[1]):
            return False
    return True


def _normalize_graph(
    c: Call, x: str, axes: tuple[int, ...], centered: bool, divide: bool
) -> tuple[str, str, str]:
    """The pages' formula node by node: the mean (or 0), the variance about it, the
    normalized value; returns (normalized, mean, variance)."""
    g = c.g
    mean = _reduce(c, "ReduceMean", x, axes) if centered else g.feed(np.zeros((), _WIDE))
    deviation = g.op("Sub", x, mean) if centered else x
    variance = _reduce(c, "ReduceMean", g.op("Mul", deviation, deviation), axes)
    if not divide:
        return deviation, mean, variance
    shifted = g.op("Add", variance, g.feed(np.array(_epsilon(c), _WIDE)))
    return g.op("Div", deviation, g.op("Sqrt", shifted)), mean, variance


def _normalized(c: Call, axes: tuple[int, ...], centered: bool, divide: bool) -> dict[str, str]:
    g = c.g
    sizes = c.sizes("InputTensor")
    rank = len(sizes)
    g.shape = tuple(sizes)  # the shape a fused activation (softmax's axes) sees
    x = _wide(c, "InputTensor")
    epsilon = _epsilon(c)
    trailing = bool(axes) and axes == tuple(range(axes[0], rank))
    if centered and divide and rank >= 3 and axes == tuple(range(2, rank)):
        channels = sizes[1]
        ones, zeros = np.ones(channels, _WIDE), np.zeros(channels, _WIDE)
        value = g.op("InstanceNormalization", x, g.feed(ones), g.feed(zeros), epsilon=epsilon)
    elif centered and divide and trailing:
        ones = np.ones(sizes[axes[0] :], _WIDE)
        value = g.op("LayerNormalization", x, g.feed(ones), axis=axes[0], epsilon=epsilon)
    elif centered and divide and epsilon == 0.0 and axes:
        value = g.op("MeanVarianceNormalization", x, axes=list(axes))
    else:
        value, _, _ = _normalize_graph(c, x, axes, centered, divide)
    result = _scaled(c, value)
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _axes(c: Call) -> tuple[int, ...]:
    return tuple(sorted({int(a) for a in c.desc["Axes"]}))


def _mean_variance_normalization(c: Call) -> dict[str, str]:
    axes = (1, 2, 3) if c.flag("CrossChannel") else (2, 3)
    return _normalized(c, axes, True, c.flag("NormalizeVariance"))


def _mean_variance_normalization1(c: Call) -> dict[str, str]:
    return _normalized(c, _axes(c), True, c.flag("NormalizeVariance"))


def _mean_variance_normalization2(c: Call) -> dict[str, str]:
    return _normalized(c, _axes(c), c.flag("UseMean"), c.flag("UseVariance"))


def _batch_normalization(c: Call) -> dict[str, str]:
    g = c.g
    g.shape = tuple(c.sizes("InputTensor"))
    x = _wide(c, "InputTensor")
    statistics = ("MeanTensor", "VarianceTensor", "ScaleTensor", "BiasTensor")
    if _per_channel(c, statistics):
        channels = c.sizes("InputTensor")[1]
        vectors = [_channel_vector(c, field, channels) for field in statistics]
        mean, variance, scale, bias = vectors
        result = g.op("BatchNormalization", x, scale, bias, mean, variance, epsilon=_epsilon(c))
    else:
        shifted = g.op("Add", _wide(c, "VarianceTensor"), g.feed(np.array(_epsilon(c), _WIDE)))
        centered = g.op("Sub", x, _wide(c, "MeanTensor"))
        normalized = g.op("Div", centered, g.op("Sqrt", shifted))
        scaled = g.op("Mul", normalized, _wide(c, "ScaleTensor"))
        result = g.op("Add", scaled, _wide(c, "BiasTensor"))
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _ones_of(sizes: list[int]) -> tuple[int, ...]:
    return tuple(i for i, n in enumerate(sizes) if n == 1)


def _batch_normalization_training(c: Call) -> dict[str, str]:
    g = c.g
    sizes = c.sizes("InputTensor")
    g.shape = tuple(sizes)
    x = _wide(c, "InputTensor")
    channel_sizes = [n if i == 1 else 1 for i, n in enumerate(sizes)]
    if len(sizes) >= 2 and c.sizes("ScaleTensor") == channel_sizes:
        channels = sizes[1]
        scale, bias = (_channel_vector(c, f, channels) for f in ("ScaleTensor", "BiasTensor"))
        # Two inputs, not one fed twice: onnxruntime updates the running statistics in place.
        running = [g.feed(np.zeros(channels, _WIDE)) for _ in range(2)]
        result, mean, variance = g.ops(
            "BatchNormalization",
            x,
            scale,
            bias,
            *running,
            dtypes=[_WIDE, _WIDE, _WIDE],
            epsilon=_epsilon(c),
            momentum=0.0,
            training_mode=1,
        )
    else:
        normalized, mean, variance = _normalize_graph(
            c, x, _ones_of(c.sizes("ScaleTensor")), True, True
        )
        scaled = g.op("Mul", normalized, _wide(c, "ScaleTensor"))
        result = g.op("Add", scaled, _wide(c, "BiasTensor"))
    if c.given("FusedAddTensor"):
        result = g.op("Add", result, _wide(c, "FusedAddTensor"))
    return {
        "OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation")),
        "OutputMeanTensor": mean,
        "OutputVarianceTensor": variance,
    }


def _gradients(c: Call, training: bool) -> dict[str, str]:
    """Both gradients' formulas (see their specs), the sums and means over MeanTensor's
    dimensions of size 1."""
    g = c.g
    axes = _ones_of(c.sizes("MeanTensor"))
    x, gradient = _wide(c, "InputTensor"), _wide(c, "InputGradientTensor")
    mean, scale = _wide(c, "MeanTensor"), _wide(c, "ScaleTensor")
    shifted = g.op("Add", _wide(c, "VarianceTensor"), g.feed(np.array(_epsilon(c), _WIDE)))
    deviation = g.op("Sqrt", shifted)
    if training:
        centered = g.op("Sub", x, _reduce(c, "ReduceMean", x, axes))
        gradient_centered = g.op("Sub", gradient, _reduce(c, "ReduceMean", gradient, axes))
        coef1 = _reduce(c, "ReduceMean", g.op("Mul", gradient, centered), axes)
        correction = g.op("Div", g.op("Mul", centered, coef1), shifted)
        inner = g.op("Sub", gradient_centered, correction)
        output = g.op("Mul", g.op("Div", scale, deviation), inner)
    else:
        output = g.op("Mul", gradient, g.op("Div", scale, deviation))
    terms = g.op("Div", g.op("Mul", gradient, g.op("Sub", x, mean)), deviation)
    return {
        "OutputGradientTensor": output,
        "OutputScaleGradientTensor": _reduce(c, "ReduceSum", terms, axes),
        "OutputBiasGradientTensor": _reduce(c, "ReduceSum", gradient, axes),
    }


def _batch_normalization_grad(c: Call) -> dict[str, str]:
    return _gradients(c, training=False)


def _batch_normalization_training_grad(c: Call) -> dict[str, str]:
    return _gradients(c, training=True)


OPERATORS = {
    "MEAN_VARIANCE_NORMALIZATION": _mean_variance_normalization,
    "MEAN_VARIANCE_NORMALIZATION1": _mean_variance_normalization1,
    "MEAN_VARIANCE_NORMALIZATION2": _mean_variance_normalization2,
    "BATCH_NORMALIZATION": _batch_normalization,
    "BATCH_NORMALIZATION_TRAINING": _batch_normalization_training,
    "BATCH_NORMALIZATION_GRAD": _batch_normalization_grad,
    "BATCH_NORMALIZATION_TRAINING_GRAD": _batch_normalization_training_grad,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
