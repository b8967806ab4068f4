"""The resampling family for the onnxruntime backend: RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3
and UPSAMPLE_2D as ONNX Resize, one dimension at a time.

DirectML's mapping c = (x - OutputPixelOffset) / Scale - InputPixelOffset takes output sizes
that need not be floor(InputSize * Scale) and any offsets; ONNX's coordinate transformations
tie the scale to the sizes, except tf_crop_and_resize, whose region of interest maps output x
to start * (n - 1) + x * (end - start) * (n - 1) / (OutputSize - 1) of an input of n elements:
an affine map like DirectML's, set here per dimension. tf_crop_and_resize reads an
extrapolation value outside the input where DirectML clamps to the edges, so the dimension is
first padded with its edge elements (Pad, mode edge) far enough that every coordinate lands
inside, and on until n - 1 is a power of two (the region's products are then exact wherever
the page's operations are). Each dimension is moved last and the tensor flattened to {rest,
n}, resized along axis 1, and put back: FLOAT32 for LINEAR (FLOAT16 widened, INT8 and UINT8
rounded to the nearest after), the data's own type for NEAREST_NEIGHBOR (nearest_mode
round_prefer_ceil for halves up, floor and ceil for RoundingDirection).

Divergences, explained: onnxruntime computes the coordinate in FLOAT32 through the region of
interest, not the page's operations, so a coordinate exactly on a rounding boundary may round
the other way where the spec's rule allows one element only; RESAMPLE3's antialiasing is not
run (Unsupported): Resize stretches its filter by OutputSize / InputSize of the padded input,
not by 1 / Scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .graph import Builder, Call, run_operator

__all__ = ["OPERATORS", "run"]

_NEAREST_MODES = {"HALF_UP": "round_prefer_ceil", "FLOOR": "floor", "CEIL": "ceil"}
_NEAREST_TYPES = frozenset({"float32", "int8", "uint8", "int32"})


def _mapping(c: Call) -> tuple[list[float], list[float], list[float], str]:
    """Scales, input and output offsets per dimension, and the nearest rounding."""
    rank = len(c.sizes("InputTensor"))
    if c.kind == "UPSAMPLE_2D":
        size = c.desc["ScaleSize"]
        scales = [1.0] * (rank - 2) + [float(size["Height"]), float(size["Width"])]
    else:
        scales = [float(np.float32(s)) for s in c.desc["Scales"]]
    if c.kind in ("RESAMPLE", "UPSAMPLE_2D"):
        input_offsets, output_offsets = [0.5] * rank, [-0.5] * rank
    else:
        input_offsets = [float(np.float32(v)) for v in c.desc["InputPixelOffsets"]]
        output_offsets = [float(np.float32(v)) for v in c.desc["OutputPixelOffsets"]]
    rounding = "HALF_UP"
    if "RoundingDirection" in c.desc:
        decreasing = c.enum("RoundingDirection", "DML_AXIS_DIRECTION_") == "DECREASING"
        rounding = "FLOOR" if decreasing else "CEIL"
    return scales, input_offsets, output_offsets, rounding


def _along(
    c: Call,
    value: str,
    shape: list[int],
    d: int,
    outputs: int,
    mapping: tuple[float, float, float],
    attributes: Mapping[str, Any],
) -> str:
    """`value` (of `shape`) resampled along dimension d to `outputs` elements."""
    g = c.g
    scale, input_offset, output_offset = mapping
    inputs = shape[d]
    x = np.arange(outputs, dtype=np.float64)
    coordinates = (x - output_offset) / scale - input_offset
    before = max(0, math.ceil(-coordinates.min())) + 2
    after = max(0, math.ceil(coordinates.max() - (inputs - 1))) + 2
    # n - 1 a power of two: the region's products are exact where the page's operations are
    # (power-of-two scales); and never the output's size (onnxruntime copies a same-shaped
    # input whatever the region says)
    span = 1 << (inputs + before + after - 1).bit_length()
    if span + 1 == outputs:
        span *= 2
    after = span + 1 - inputs - before
    order = [i for i in range(len(shape)) if i != d] + [d]
    rest = math.prod(shape) // inputs
    flat = g.reshape(g.op("Transpose", value, perm=order), [rest, inputs])
    padded = g.op("Pad", flat, g.int64([0, before, 0, after]), mode="edge")
    start = (before - (output_offset / scale + input_offset)) / span
    end = start + (outputs - 1) / (scale * span) if outputs > 1 else start
    # the rows keep their places: x * (rest - 1) / (rest - 1) is exact in FLOAT32
    roi = g.feed(np.array([0, start, 1, end], np.float32))
    resized = g.op(
        "Resize",
        padded,
        roi,
        "",
        g.int64([rest, outputs]),
        coordinate_transformation_mode="tf_crop_and_resize",
        **attributes,
    )
    moved = [shape[i] for i in order[:-1]] + [outputs]
    back = [order.index(i) for i in range(len(shape))]
    return g.op("Transpose", g.reshape(resized, moved), perm=back)


def _resample(c: Call) -> dict[str, str]:
    g = c.g
    scales, input_offsets, output_offsets, rounding = _mapping(c)
    linear = c.enum("InterpolationMode", "DML_INTERPOLATION_MODE_") == "LINEAR"
    if linear and c.flag("Antialiased") and any(1.0 / s > 2.0 for s in scales):
        raise Unsupported(
            "onnxruntime's Resize stretches its antialiasing filter by OutputSize / InputSize, "
            "not by 1 / Scale"
        )
    shape = c.sizes("InputTensor")
    g.shape = tuple(shape)
    dtype = c.dtype("InputTensor")
    if linear:
        value = g.cast(c.feed("InputTensor"), np.float32)
        attributes: dict[str, Any] = {"mode": "linear"}
    else:
        carrier = dtype if dtype.name in _NEAREST_TYPES else np.dtype(np.float32)
        value = g.cast(c.feed("InputTensor"), carrier)
        attributes = {"mode": "nearest", "nearest_mode": _NEAREST_MODES[rounding]}
    for d, outputs in enumerate(c.sizes("OutputTensor")):
        mapping = (scales[d], input_offsets[d], output_offsets[d])
        value = _along(c, value, shape, d, outputs, mapping, attributes)
        shape = [*shape[:d], outputs, *shape[d + 1 :]]
    if linear and dtype.kind in "iu":
        limits = np.iinfo(dtype)
        value = g.op("Round", value)
        low, high = g.scalar(limits.min, value), g.scalar(limits.max, value)
        value = g.op("Clip", value, low, high)
    return {"OutputTensor": g.cast(value, dtype)}


def _gradient(c: Call) -> dict[str, str]:
    raise Unsupported(
        "ONNX has no gradient of Resize (onnxruntime's inference build has no training "
        "operators): no graph for RESAMPLE_GRAD or RESAMPLE_GRAD1"
    )


OPERATORS: dict[str, Builder] = {
    "RESAMPLE": _resample,
    "RESAMPLE1": _resample,
    "RESAMPLE2": _resample,
    "RESAMPLE3": _resample,
    "RESAMPLE_GRAD": _gradient,
    "RESAMPLE_GRAD1": _gradient,
    "UPSAMPLE_2D": _resample,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
