"""The resampling family, written from the DirectML pages: RESAMPLE, RESAMPLE1, RESAMPLE2,
RESAMPLE3, UPSAMPLE_2D and the gradients RESAMPLE_GRAD (of RESAMPLE1) and RESAMPLE_GRAD1 (of
RESAMPLE2).

Every operator is one mapping per dimension, the pages' "OutputTensorX = (InputTensorX +
InputPixelOffset) * Scale + OutputPixelOffset" read backwards: output element x samples the
input at c = (x - OutputPixelOffset) / Scale - InputPixelOffset, computed here in FLOAT64
from the fields' FLOAT32 values. RESAMPLE is RESAMPLE1 with the offsets 0.5 and -0.5 (its
remarks); UPSAMPLE_2D is RESAMPLE with the scales {1, ..., HeightScale, WidthScale} (its page:
only height and width are upsampled, RESAMPLE "a more flexible version"). Coordinates outside
the input are clamped to its edges ("the output edges are clamped").

NEAREST_NEIGHBOR: the element at c rounded: RESAMPLE2 and RESAMPLE3 by RoundingDirection
(DECREASING floor, INCREASING ceil), the others to the nearest element with halves up, floor(c +
0.5) (RESAMPLE2's remarks: RESAMPLE1 is RESAMPLE2 rounding DECREASING half a pixel further on).
A device computes c in FLOAT32: where that is not exact (an order of its operations rounds),
a coordinate within `_coordinate_error` of a rounding boundary may round either way; those
cells are recorded as written once per allowed element (any of them is a correct result).

LINEAR: per dimension the two elements around c, weights 1 - (c - floor(c)) and c - floor(c);
the output is the sum over the 2^DimensionCount products of the weights with their element
(multilinear), FLOAT64, then one rounding to the output type (INT8 and UINT8 to the nearest,
halves to even: the pages name no rounding, their comparison allows one either side).
RESAMPLE3 with Antialiased, per dimension where 1 / Scale > 2: the linear (triangle) filter
stretched by k = 1 / Scale, weights max(0, 1 - |i - c| / k) over the elements i within k of c
(clamped to the edges), divided by their sum.

`EXACT` gives the FLOAT64 result, its bound and the largest intermediate magnitude for the
dot-product accuracy model: the bound is B + P / (u * KS) with B the sum of |weight * element|,
KS the spec's terms and P what a FLOAT32 coordinate may change the result by (the derivative of
the weighted sum along each dimension times `_coordinate_error`), plus the antialiasing
filter's normalization, (2 * taps + 5) * u * B per such dimension. The largest intermediate
magnitude counts every element read, a weight of 0 too (a pass that overflows to infinity
then makes 0 * infinity).

The gradients are the forward mapping's transpose, computed independently of any kernel: per
dimension the forward operator as a dense matrix {outputs, inputs}, and the incoming gradient
taken through each matrix transposed (every output's gradient added back to the elements it
read, times their weights); their bound allows a NEAREST_NEIGHBOR gradient to land on either
element where a FLOAT32 coordinate may round either way.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .convolution import Exact
from .fields import Fields, Inputs, Operator, Outputs, comparison_terms
from .tensors import WriteLog

__all__ = ["EXACT", "RESAMPLING", "UNDEFINED_NOTES"]

_UNIT = 2.0**-24  # FLOAT32's unit roundoff: coordinates and accumulation
# A coordinate computed in FLOAT32 in any order of the page's operations (a reciprocal of the
# scale, a fused multiply-add) is within this many units of the magnitudes involved.
_COORDINATE_UNITS = 16
_OPERATORS = ("RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3", "UPSAMPLE_2D")
_GRADIENTS = ("RESAMPLE_GRAD", "RESAMPLE_GRAD1")


@dataclass(frozen=True)
class _Mapping:
    """What every dimension does: interpolation, rounding, per-dimension scale and offsets."""

    linear: bool
    rounding: str  # HALF_UP, FLOOR or CEIL
    scales: tuple[float, ...]
    input_offsets: tuple[float, ...]
    output_offsets: tuple[float, ...]
    antialiased: bool


def _mapping(name: str, f: Fields) -> _Mapping:
    rank = len(f.sizes("OutputGradientTensor" if name in _GRADIENTS else "InputTensor"))
    linear = f.enum("InterpolationMode") == "LINEAR"
    if name == "UPSAMPLE_2D":
        size = f.raw("ScaleSize")
        scales = (1.0,) * (rank - 2) + (float(size["Height"]), float(size["Width"]))
    else:
        scales = f.floats32("Scales")
    if name in ("RESAMPLE", "UPSAMPLE_2D"):
        input_offsets, output_offsets = (0.5,) * rank, (-0.5,) * rank
    else:
        input_offsets = f.floats32("InputPixelOffsets")
        output_offsets = f.floats32("OutputPixelOffsets")
    rounding = "HALF_UP"
    if f.has_field("RoundingDirection"):
        rounding = "FLOOR" if f.enum("RoundingDirection") == "DECREASING" else "CEIL"
    antialiased = f.has_field("Antialiased") and f.flag("Antialiased")
    return _Mapping(linear, rounding, scales, input_offsets, output_offsets, antialiased)


def _coordinates(outputs: int, scale: float, input_offset: float, output_offset: float) -> Any:
    """Each output element's input coordinate c (FLOAT64) and how far a FLOAT32 computation of
    it may be from c: 0 where every order of the operations is exact (a scale whose reciprocal
    FLOAT32 holds, a power of two, or x - OutputPixelOffset 0; and both orders below giving
    c)."""
    x = np.arange(outputs, dtype=np.float64)
    quotient = (x - output_offset) / scale
    c = quotient - input_offset
    f32 = np.float32
    with np.errstate(all="ignore"):
        shifted = x.astype(f32) - f32(output_offset)
        divided = (shifted / f32(scale)) - f32(input_offset)
        multiplied = (shifted * (f32(1) / f32(scale))) - f32(input_offset)
    reciprocal = float(f32(1) / f32(scale)) * scale == 1.0
    exact = (
        (reciprocal | (shifted == 0))  # 0 / Scale is 0 in every order
        & (divided.astype(np.float64) == c)
        & (multiplied.astype(np.float64) == c)
    )
    magnitude = np.abs(quotient) + abs(input_offset) + abs(output_offset) / scale + 1
    error = np.where(exact, 0.0, _COORDINATE_UNITS * _UNIT * magnitude)
    return c, error


def _rounded(c: np.ndarray, rounding: str) -> np.ndarray:
    rounded: np.ndarray = {"FLOOR": np.floor, "CEIL": np.ceil}.get(rounding, _half_up)(c)
    return rounded


def _half_up(c: np.ndarray) -> np.ndarray:
    rounded: np.ndarray = np.floor(c + 0.5)
    return rounded


@dataclass(frozen=True)
class _Taps:
    """One dimension's sampling: per output element, the input elements read (clamped), their
    weights, and how fast each weight changes with the coordinate (its |derivative|)."""

    indices: np.ndarray  # {outputs, taps}
    weights: np.ndarray
    slopes: np.ndarray
    error: np.ndarray  # {outputs}: the coordinate's allowance
    extra_terms: int  # rounding steps beyond the spec's KS (antialiasing's normalization)


def _linear_taps(inputs: int, c: np.ndarray, error: np.ndarray, scale: float, aa: bool) -> _Taps:
    if not (aa and 1.0 / scale > 2.0):
        low = np.floor(c)
        fraction = c - low
        indices = np.stack([low, low + 1], axis=1)
        weights = np.stack([1 - fraction, fraction], axis=1)
        slopes = np.ones_like(weights)
        extra = 0
    else:  # the triangle filter stretched by k = 1 / scale, normalized
        k = 1.0 / scale
        reach = int(np.ceil(k))
        offsets = np.arange(-reach + 1, reach + 1)
        indices = np.floor(c)[:, None] + offsets[None, :]
        raw = np.maximum(0.0, 1.0 - np.abs(indices - c[:, None]) / k)
        total = raw.sum(axis=1, keepdims=True)
        weights = raw / total
        inside = (raw > 0).astype(np.float64)
        slopes = (inside / k + weights * inside.sum(axis=1, keepdims=True) / k) / total
        extra = 2 * len(offsets) + 5
    clamped = np.clip(indices, 0, inputs - 1).astype(np.int64)
    return _Taps(clamped, weights, slopes, error, extra)


def _axes(f: Fields, m: _Mapping) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, int]]:
    for d, (inputs, outputs) in enumerate(
        zip(f.sizes("InputTensor"), f.sizes("OutputTensor"), strict=True)
    ):
        scale = m.scales[d]
        c, error = _coordinates(outputs, scale, m.input_offsets[d], m.output_offsets[d])
        yield d, inputs, c, error, outputs


def _gathered(data: np.ndarray, indices: list[np.ndarray]) -> np.ndarray:
    gathered: np.ndarray = data[np.ix_(*indices)]
    return gathered


def _nearest(name: str, f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    m = _mapping(name, f)
    data = np.asarray(x["InputTensor"])
    chosen, low, high = [], [], []
    for _, inputs, c, error, _ in _axes(f, m):

        def element(at: np.ndarray, inputs: int = inputs) -> np.ndarray:
            clamped: np.ndarray = np.clip(_rounded(at, m.rounding), 0, inputs - 1)
            return clamped.astype(np.int64)

        chosen.append(element(c))
        low.append(element(c - error))
        high.append(element(c + error))
    output = _gathered(data, chosen)
    ambiguous = np.zeros(output.shape, dtype=bool)
    for d, (lo, hi) in enumerate(zip(low, high, strict=True)):
        shape = [1] * output.ndim
        shape[d] = -1
        ambiguous |= (lo != hi).reshape(shape)
    if ambiguous.any():  # either neighbour along each such dimension, as writes to the cell
        cells = np.flatnonzero(ambiguous)
        writes = log.setdefault("OutputTensor", [])
        for choice in itertools.product(*zip(low, high, strict=True)):
            writes.append((cells, _gathered(data, list(choice)).reshape(-1)[cells]))
    return {"OutputTensor": output}


def _linear_exact(name: str, f: Fields, x: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = _mapping(name, f)
    data = np.asarray(x["InputTensor"], dtype=np.float64)
    taps = [
        _linear_taps(inputs, c, error, m.scales[d], m.antialiased)
        for d, inputs, c, error, _ in _axes(f, m)
    ]
    shape = tuple(len(t.error) for t in taps)
    rank = len(taps)

    def along(d: int, values: np.ndarray) -> np.ndarray:
        return values.reshape([-1 if i == d else 1 for i in range(rank)])

    value = np.zeros(shape)
    bound = np.zeros(shape)
    reach = np.zeros(shape)  # every element read, a weight of 0 too: what a pass may hold
    change = np.zeros(shape)  # sum over dimensions of the coordinate's allowance * derivative
    with np.errstate(all="ignore"):
        for slots in itertools.product(*(range(t.indices.shape[1]) for t in taps)):
            element = _gathered(data, [t.indices[:, s] for t, s in zip(taps, slots, strict=True)])
            weights = [
                along(d, t.weights[:, s]) for d, (t, s) in enumerate(zip(taps, slots, strict=True))
            ]
            weight = np.prod(np.broadcast_arrays(*weights), axis=0) if weights else 1.0
            value = value + weight * element
            bound = bound + np.abs(weight * element)
            reach = reach + np.abs(element)
            for d, (t, s) in enumerate(zip(taps, slots, strict=True)):
                others = [w for i, w in enumerate(weights) if i != d]
                rest = np.prod(np.broadcast_arrays(*others), axis=0) if others else 1.0
                slope = along(d, t.slopes[:, s] * t.error)
                change = change + rest * slope * np.abs(element)
        extra = sum(t.extra_terms for t in taps) * _UNIT * bound
        terms = comparison_terms(f)
        widened = bound + (change + extra) / (_UNIT * terms)
    return value, widened, reach


def _matrices(name: str, f: Fields) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per dimension, the forward operator as a matrix {outputs, inputs} (the weight each
    output element gives each input element), the same shape's allowance for FLOAT32
    coordinates (a LINEAR weight's slope times the coordinate's error; for NEAREST_NEIGHBOR, 1
    at both elements an output may read where a FLOAT32 coordinate may round either way) and
    the elements each output reads at all (1, a weight of 0 too)."""
    m = _mapping(name, f)
    matrices = []
    for d, (inputs, outputs) in enumerate(
        zip(f.sizes("OutputGradientTensor"), f.sizes("InputGradientTensor"), strict=True)
    ):
        c, error = _coordinates(outputs, m.scales[d], m.input_offsets[d], m.output_offsets[d])
        weights = np.zeros((outputs, inputs))
        allowance = np.zeros((outputs, inputs))
        support = np.zeros((outputs, inputs))
        rows = np.arange(outputs)
        if m.linear:
            taps = _linear_taps(inputs, c, error, m.scales[d], False)
            for t in range(taps.indices.shape[1]):
                np.add.at(weights, (rows, taps.indices[:, t]), taps.weights[:, t])
                np.add.at(allowance, (rows, taps.indices[:, t]), taps.slopes[:, t] * error)
                np.add.at(support, (rows, taps.indices[:, t]), 1.0)
        else:

            def element(at: np.ndarray, inputs: int = inputs) -> np.ndarray:
                clamped: np.ndarray = np.clip(_rounded(at, m.rounding), 0, inputs - 1)
                return clamped.astype(np.int64)

            weights[rows, element(c)] = 1.0
            support[rows, element(c)] = 1.0
            low, high = element(c - error), element(c + error)
            either = low != high
            allowance[rows[either], low[either]] = 1.0
            allowance[rows[either], high[either]] = 1.0
        matrices.append((weights, allowance, support))
    return matrices


def _adjoint(data: np.ndarray, matrices: list[np.ndarray]) -> np.ndarray:
    """`data` (the forward output's shape) through each dimension's matrix transposed."""
    for d, matrix in enumerate(matrices):
        data = np.moveaxis(np.tensordot(matrix.T, data, axes=([1], [d])), 0, d)
    return data


def _gradient_exact(name: str, f: Fields, x: Inputs) -> tuple[np.ndarray, ...]:
    """The pages' gradient: each InputGradientTensor element spread back onto the elements its
    forward output read, by the same weights (nearest neighbour: 1 to the element chosen)."""
    gradient = np.asarray(x["InputGradientTensor"], dtype=np.float64)
    matrices = _matrices(name, f)
    weights = [w for w, _, _ in matrices]
    magnitudes = [np.abs(w) for w in weights]
    with np.errstate(all="ignore"):
        value = _adjoint(gradient, weights)
        bound = _adjoint(np.abs(gradient), magnitudes)
        reach = _adjoint(np.abs(gradient), [s for _, _, s in matrices])
        change = np.zeros_like(bound)
        for d, (_, allowance, _) in enumerate(matrices):
            per_dimension = [*magnitudes[:d], allowance, *magnitudes[d + 1 :]]
            change = change + _adjoint(np.abs(gradient), per_dimension)
        widened = bound + change / (_UNIT * comparison_terms(f, "OutputGradientTensor"))
    return value, widened, reach


def _gradient(name: str) -> tuple[Exact, Operator]:
    def exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        value, bound, largest = _gradient_exact(name, f, x)
        return {"OutputGradientTensor": (value, bound, largest)}

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        value, _, _ = _gradient_exact(name, f, x)
        with np.errstate(all="ignore"):
            return {"OutputGradientTensor": value.astype(f.dtype("OutputGradientTensor"))}

    return exact, run


def _exact(name: str) -> Exact:
    def run(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        return {"OutputTensor": _linear_exact(name, f, x)}

    return run


def _operator(name: str) -> Operator:
    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        if f.enum("InterpolationMode") != "LINEAR":
            return _nearest(name, f, x, log)
        value, _, _ = _linear_exact(name, f, x)
        dtype = f.dtype("OutputTensor")
        if dtype.kind in "iu":
            limits = np.iinfo(dtype)
            value = np.clip(np.rint(value), limits.min, limits.max)
        with np.errstate(all="ignore"):
            return {"OutputTensor": value.astype(dtype)}

    return run


EXACT: dict[str, Exact] = {
    **{name: _exact(name) for name in _OPERATORS},
    **{name: _gradient(name)[0] for name in _GRADIENTS},
}
RESAMPLING: dict[str, Operator] = {
    **{name: _operator(name) for name in _OPERATORS},
    **{name: _gradient(name)[1] for name in _GRADIENTS},
}

UNDEFINED_NOTES: dict[str, str] = {
    name: (
        "LINEAR with a non-finite input element: whether a weight of 0 multiplies it (giving "
        "NaN) is open (R1). NEAREST_NEIGHBOR: a coordinate a FLOAT32 computation does not give "
        "exactly, within its rounding of a boundary, may round either way; the reference "
        "records every element allowed."
    )
    for name in _OPERATORS
}
