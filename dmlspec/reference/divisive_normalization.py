"""The divisive normalizations, written from the DirectML pages: LOCAL_RESPONSE_NORMALIZATION,
LOCAL_RESPONSE_NORMALIZATION_GRAD and LP_NORMALIZATION, in FLOAT64.

LRN walks the local region's offsets (channels, or rows by columns), adding each shifted
square where it lies inside the tensor: S, then D = Bias + Alpha / LocalSize * S and
x * D^-Beta. Its gradient is the formula differentiated by hand, not through the forward
operator: g_j D_j^-Beta - 2 Beta (Alpha / LocalSize) x_j * sum over the regions i holding j of
g_i x_i D_i^(-Beta - 1), the regions holding j walked with the offsets reversed.
LP_NORMALIZATION divides each vector along Axis by its norm plus Epsilon, and also computes
the spec's other readings of Epsilon (max(norm, Epsilon); sqrt(sum x^2 + Epsilon) for P = 2).

`EXACT` gives each output's FLOAT64 value, its bound and the largest intermediate, what the
dot-product accuracy model judges a result by; the bounds are the spec's derivations (the
comparison rules' notes): LRN |y| (|Beta| c + 1) with c = (|Bias| + |Alpha / LocalSize| S) / |D|
(D's condition number), the gradient the same per term, LP (n + 3) |y| plus the readings'
spread over u(FLOAT32); each with what underflow below FLOAT32's normal range adds (tiny / u
over the magnitude of each partial result, `_underflow`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["DIVISIVE_NORMALIZATION", "EXACT"]

Exact = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]

# u(FLOAT32): the readings' spread in the units the LP bound is multiplied by.
_UNIT = 2.0**-24
# FLOAT32's smallest normal over its u (2^-126 / 2^-24): an underflowing operation's error in
# units of u (the optimizer's reference uses it too).
_TINY_OVER_U = 2.0**-102


def _shifted(data: np.ndarray, axes: tuple[int, ...], offsets: tuple[int, ...]) -> np.ndarray:
    """result[i] = data[i + offset] along `axes` where that lies inside the tensor, else 0."""
    result = np.zeros_like(data)
    target: list[slice] = [slice(None)] * data.ndim
    source: list[slice] = [slice(None)] * data.ndim
    for axis, offset in zip(axes, offsets, strict=True):
        size = data.shape[axis]
        if abs(offset) >= size:
            return result
        target[axis] = slice(max(0, -offset), size - max(0, offset))
        source[axis] = slice(max(0, offset), size - max(0, -offset))
    result[tuple(target)] = data[tuple(source)]
    return result


def _offsets(f: Fields, shape: tuple[int, ...], reverse: bool) -> Iterator[tuple[int, ...]]:
    """The local region's offsets from its element (floor((LocalSize - 1) / 2) before,
    ceil((LocalSize - 1) / 2) after; reversed: the elements whose regions hold it), those
    beyond the tensor's extent left out (they read nothing)."""
    size = f.integer("LocalSize")
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    if reverse:
        before, after = after, before
    ranges = [
        range(-min(before, shape[axis] - 1), min(after, shape[axis] - 1) + 1) for axis in _axes(f)
    ]
    for index in np.ndindex(*[len(r) for r in ranges]):
        yield tuple(r[i] for r, i in zip(ranges, index, strict=True))


def _axes(f: Fields) -> tuple[int, ...]:
    return (1,) if f.flag("CrossChannel") else (2, 3)


def _region_sum(f: Fields, data: np.ndarray, reverse: bool = False) -> np.ndarray:
    total = np.zeros_like(data)
    for offsets in _offsets(f, data.shape, reverse):
        total = total + _shifted(data, _axes(f), offsets)
    return total


def _lrn_terms(f: Fields, x: np.ndarray) -> dict[str, np.ndarray]:
    """S, D, D's condition number and k = Alpha / LocalSize, per element."""
    scale = f.float32("Alpha") / f.integer("LocalSize")
    bias = f.float32("Bias")
    total = _region_sum(f, x * x)
    divisor = bias + scale * total
    # D's absolute error in units of u: (n + 3) (|Bias| + |k| S), and where squares, the
    # product or the sum leave FLOAT32's normal range, (n |k| + 2) tiny / u more.
    count = _region_sum(f, np.ones_like(x))
    floor = (count * abs(scale) + 2) * _TINY_OVER_U / (count + 3)
    condition = (abs(bias) + abs(scale) * total + floor) / np.abs(divisor)
    return {"S": total, "D": divisor, "c": condition, "k": np.asarray(scale)}


def _ratio(top: Any, bottom: Any) -> np.ndarray:
    """top / bottom, 0 where top is 0."""
    top, bottom = np.broadcast_arrays(np.asarray(top, np.float64), np.asarray(bottom, np.float64))
    ratio: np.ndarray = np.where(top == 0, 0.0, top / np.where(top == 0, 1.0, bottom))
    return ratio


def _largest(*arrays: np.ndarray) -> np.ndarray:
    largest: np.ndarray = np.maximum.reduce([np.abs(a) for a in arrays])
    return largest


def _underflow(term: np.ndarray, *partials: np.ndarray) -> np.ndarray:
    """A term's error, in units of u, from partial results of it (powers, partial products)
    below FLOAT32's normal range, in any order: tiny / u over each partial's magnitude, scaled
    by the term (0 where the term is 0)."""
    total = np.zeros(np.shape(term))
    for partial in partials:
        total = total + _ratio(np.abs(term) * _TINY_OVER_U, np.abs(partial))
    return total


def _lrn_exact(f: Fields, x: Inputs) -> Exact:
    data = np.asarray(x["InputTensor"]).astype(np.float64)
    beta = f.float32("Beta")
    t = _lrn_terms(f, data)
    power = t["D"] ** -beta
    value = data * power
    bound = np.abs(value) * (abs(beta) * t["c"] + 1) + _underflow(value, power)
    largest = _largest(t["S"], t["k"] * t["S"], t["D"], power, 1 / power)
    return {"OutputTensor": (value, bound, largest)}


def _lrn_grad_exact(f: Fields, x: Inputs) -> Exact:
    data = np.asarray(x["InputTensor"]).astype(np.float64)
    gradient = np.asarray(x["InputGradientTensor"]).astype(np.float64)
    beta = f.float32("Beta")
    t = _lrn_terms(f, data)
    power, steeper = t["D"] ** -beta, t["D"] ** (-beta - 1)
    own = gradient * power
    spread = gradient * data * steeper
    partials = (steeper, gradient * data, gradient * steeper, data * steeper)
    spread_bound = np.abs(spread) * (abs(beta + 1) * t["c"] + 1) + _underflow(spread, *partials)
    factor = 2 * beta * t["k"]
    held = _region_sum(f, spread, reverse=True)
    value = own - factor * data * held
    bound = (
        np.abs(own) * (abs(beta) * t["c"] + 1)
        + _underflow(own, power)
        + np.abs(factor * data) * _region_sum(f, spread_bound, reverse=True)
        + _underflow(factor * data * held, factor * held, data * held)
    )
    # The largest intermediate: each element's own (S, D, the powers, the products) and those
    # of the elements whose regions hold it, which its sum reads.
    own_largest = _largest(
        t["S"], t["D"], power, 1 / power, steeper, 1 / steeper, gradient * data, spread
    )
    reach = _region_sum(f, own_largest + np.abs(gradient * steeper), reverse=True)
    largest = _largest(own, reach, data * reach, factor * reach)
    return {"OutputGradientTensor": (value, bound, largest)}


def _lp_exact(f: Fields, x: Inputs) -> Exact:
    data = np.asarray(x["InputTensor"]).astype(np.float64)
    axis = f.axis(data.ndim)
    p = f.integer("P")
    epsilon = f.float32("Epsilon")
    total = np.sum(np.abs(data) ** p, axis=axis, keepdims=True)
    norm = total if p == 1 else np.sqrt(total)
    value = data / (norm + epsilon)
    readings = [data / np.maximum(norm, epsilon)]
    if p == 2:
        readings.append(data / np.sqrt(total + epsilon))
    spread = np.maximum.reduce([np.abs(r - value) for r in readings])
    count = data.shape[axis]
    relative = np.full(total.shape, float(count + 3))
    if p == 2:  # squares below FLOAT32's normal range: the sum's error n tiny, halved by the root
        underflow = _ratio(count * _TINY_OVER_U, 2 * total) * _ratio(norm, norm + epsilon)
        relative = relative + underflow
    bound = relative * np.abs(value) + spread / _UNIT
    return {"OutputTensor": (value, bound, np.broadcast_to(total, data.shape))}


EXACT = {
    "LOCAL_RESPONSE_NORMALIZATION": _lrn_exact,
    "LOCAL_RESPONSE_NORMALIZATION_GRAD": _lrn_grad_exact,
    "LP_NORMALIZATION": _lp_exact,
}


def _rounded(name: str) -> Operator:
    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            outputs[field] = value.astype(f.dtype(field))
        return outputs

    return run


DIVISIVE_NORMALIZATION: dict[str, Operator] = {name: _rounded(name) for name in EXACT}
