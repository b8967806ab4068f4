"""The pooling family, written from the DirectML pages; so far AVERAGE_POOLING(1),
MAX_POOLING(1, 2), LP_POOLING(1), MAX_UNPOOLING (a loop writing each input element at its
flat index in a zero output, every write logged) and AVERAGE_POOLING_GRAD (each window's
incoming gradient over its divisor added to the elements it holds: the page's "weighted
contributions", computed directly, not through the forward operator), MAX_POOLING_GRAD
(each window's gradient added at its largest element, found by MAX_POOLING2's walk) and
QUANTIZED_LINEAR_AVERAGE_POOLING (AVERAGE's walk over the dequantized input in FLOAT64, then
ELEMENT_WISE_QUANTIZE_LINEAR's rule).

One loop over the window's offsets (row-major), each step taking, for every output position o at
once, the input element at o * Strides + k * Dilations - StartPadding where it lies inside the
input (the padding's elements are not read): MAX keeps the larger value and the first index
holding it (strictly larger values replace it, so among equal values the first offset, the
smallest row-major input index, stays: "the later equal values are ignored"); AVERAGE and LP sum
in FLOAT64 and count the elements read. `EXACT` gives AVERAGE's and LP's FLOAT64 result, its
bound (AVERAGE: the average of |x|; LP: the result itself, every term |x|^P being non-negative)
and the largest intermediate (the sum before the division or the root), what the dot-product
accuracy model judges a result by.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .element_wise import quantize_linear
from .element_wise_numbers import to_type
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["EXACT", "POOLING", "UNDEFINED_NOTES"]

Exact = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


Ints = tuple[int, ...]


def _window_fields(f: Fields, spatial: int) -> tuple[Ints, Ints, Ints, Ints]:
    """WindowSize, Strides, Dilations (1s where the operator has none), StartPadding."""
    dilations = f.integers("Dilations", spatial) if f.present("Dilations") else (1,) * spatial
    return (
        f.integers("WindowSize", spatial),
        f.integers("Strides", spatial),
        dilations,
        f.integers("StartPadding", spatial),
    )


def _taps(f: Fields, data: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per window offset, row-major: the element each output position reads there (any value
    where outside), whether it lies inside the input, and its row-major input index."""
    window, strides, dilations, start = _window_fields(f, data.ndim - 2)
    yield from _window_taps(data, window, strides, dilations, start, f.sizes("OutputTensor"))


def _window_taps(
    data: np.ndarray,
    window: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start: tuple[int, ...],
    out_shape: tuple[int, ...],
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    spatial = data.ndim - 2
    out = out_shape[2:]
    flat = np.arange(data.size).reshape(data.shape)
    for offset in np.ndindex(*window):
        picked, index = data, flat
        inside = np.ones((1, 1, *out), bool)
        for d in range(spatial):
            positions = np.arange(out[d]) * strides[d] + offset[d] * dilations[d] - start[d]
            within = (positions >= 0) & (positions < data.shape[2 + d])
            clipped = np.clip(positions, 0, data.shape[2 + d] - 1)
            picked = np.take(picked, clipped, axis=2 + d)
            index = np.take(index, clipped, axis=2 + d)
            shape = [1] * data.ndim
            shape[2 + d] = -1
            inside = inside & within.reshape(shape)
        yield picked, np.broadcast_to(inside, picked.shape), index


def _maximum(
    data: np.ndarray,
    window: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
    start: tuple[int, ...],
    out_shape: tuple[int, ...],
) -> tuple[np.ndarray, np.ndarray]:
    """Each window's maximum and the row-major input index of the first element holding it
    (0 and -1 for a window wholly in the padding: MAX_POOLING's R1)."""
    best = np.zeros(out_shape, data.dtype)
    where = np.full(out_shape, -1, np.int64)
    for value, inside, index in _window_taps(data, window, strides, dilations, start, out_shape):
        take = inside & ((where < 0) | (value > best))
        best = np.where(take, value, best)
        where = np.where(take, index, where)
    return best, where


def _max_pooling(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    data = np.asarray(x["InputTensor"])
    fields = _window_fields(f, data.ndim - 2)
    best, where = _maximum(data, *fields, f.sizes("OutputTensor"))
    outputs: dict[str, Any] = {"OutputTensor": best.astype(f.dtype("OutputTensor"))}
    if f.present("OutputIndicesTensor"):
        indices = np.maximum(where, 0).astype(f.dtype("OutputIndicesTensor"))
        outputs["OutputIndicesTensor"] = indices
    return outputs


def _sums(f: Fields, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each window's sum of the input elements it holds, and how many it holds."""
    out_shape = f.sizes("OutputTensor")
    total = np.zeros(out_shape, data.dtype)
    count = np.zeros(out_shape, np.float64)
    for value, inside, _ in _taps(f, data):
        total = total + np.where(inside, value, data.dtype.type(0))
        count = count + inside
    return total, count


def _wide(data: Any) -> tuple[np.ndarray, Any]:
    """The data in FLOAT64 and the type to sum it in (FLOAT64 data in long double where the
    platform has a wider one, so that the reference's own rounding stays below a FLOAT64
    result's allowance)."""
    array = np.asarray(data)
    wide = np.longdouble if array.dtype == np.float64 else np.float64
    return array.astype(wide), wide


def _average(f: Fields, data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each window's average of `data` (IncludePadding: over prod(WindowSize), else over the
    input elements it holds), the average of the absolute values and their sum, in FLOAT64."""
    total, count = _sums(f, data)
    absolute, _ = _sums(f, np.abs(data))
    if f.flag("IncludePadding"):
        window, *_ = _window_fields(f, data.ndim - 2)
        count = np.full(count.shape, float(np.prod(window)))
    with np.errstate(all="ignore"):
        value = (total / count).astype(np.float64)
        bound = (absolute / count).astype(np.float64)
    return value, bound, absolute.astype(np.float64)


def _average_exact(f: Fields, x: Inputs) -> Exact:
    data, _ = _wide(x["InputTensor"])
    return {"OutputTensor": _average(f, data)}


def _per_channel(x: Inputs, field: str, rank: int) -> Any:
    """A per-tensor or per-channel scale or zero point ({1, C, 1, 1}, leading 1s optional) as
    FLOAT64 {1, C or 1, 1, ...} of `rank` dimensions; an absent zero point 0."""
    if field not in x:
        return 0.0
    return np.asarray(x[field], np.float64).reshape(1, -1, *(1,) * (rank - 2))


def _quantized_linear_average_pooling(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """The page: "dequantizing the inputs, then performing average pooling, and then quantizing
    the output". Dequantize: (Input - ZeroPoint) * Scale, per tensor or per channel; the
    average AVERAGE_POOLING1's (the padding zeros of the dequantized input); quantize:
    clamp(round(Input / Scale) + ZeroPoint, Min, Max), as ELEMENT_WISE_QUANTIZE_LINEAR."""
    data = np.asarray(x["InputTensor"], np.float64)
    rank = data.ndim
    dtype = f.dtype("OutputTensor")
    with np.errstate(all="ignore"):
        real = (data - _per_channel(x, "InputZeroPointTensor", rank)) * _per_channel(
            x, "InputScaleTensor", rank
        )
        average, _, _ = _average(f, real)
        quantized = quantize_linear(
            average,
            _per_channel(x, "OutputScaleTensor", rank),
            _per_channel(x, "OutputZeroPointTensor", rank),
            dtype,
        )
    return {"OutputTensor": to_type(quantized, dtype)}


def _lp_exact(f: Fields, x: Inputs) -> Exact:
    data, _ = _wide(x["InputTensor"])
    p = f.integer("P")
    with np.errstate(all="ignore"):
        total, _ = _sums(f, np.abs(data) ** p)
        value = (total ** (1.0 / p)).astype(np.float64)
    return {"OutputTensor": (value, value, total.astype(np.float64))}


def _average_pooling_grad_exact(f: Fields, x: Inputs) -> Exact:
    """Each forward window's incoming gradient, divided by its divisor, added to every input
    element the window holds (FLOAT64; the bound the same on |g|): the forward windows walked
    over the forward input's shape (OutputGradientTensor's), for their elements' indices."""
    gradient, _ = _wide(x["InputGradientTensor"])
    shape = f.sizes("OutputGradientTensor")
    window, strides, dilations, start = _window_fields(f, len(shape) - 2)
    taps = list(_window_taps(np.zeros(shape), window, strides, dilations, start, gradient.shape))
    if f.flag("IncludePadding"):
        divisor: Any = float(np.prod(window))
    else:
        divisor = sum(inside.astype(np.float64) for _, inside, _ in taps)
    with np.errstate(all="ignore"):
        share = gradient / divisor
    value = np.zeros(int(np.prod(shape)), gradient.dtype)
    bound = np.zeros(int(np.prod(shape)), gradient.dtype)
    for _, inside, index in taps:
        np.add.at(value, index[inside], share[inside])
        np.add.at(bound, index[inside], np.abs(share[inside]))
    shaped = [a.reshape(shape).astype(np.float64) for a in (value, bound)]
    return {"OutputGradientTensor": (shaped[0], shaped[1], shaped[1])}


def _max_pooling_grad_exact(f: Fields, x: Inputs) -> Exact:
    """Each window's gradient added at its largest element's index (MAX_POOLING2's walk: the
    first among ties; none for a window wholly in the padding), in FLOAT64."""
    data = np.asarray(x["InputTensor"])
    gradient, _ = _wide(x["InputGradientTensor"])
    fields = _window_fields(f, data.ndim - 2)
    _, where = _maximum(data, *fields, gradient.shape)
    chosen = where >= 0
    value = np.zeros(data.size, gradient.dtype)
    bound = np.zeros(data.size, gradient.dtype)
    np.add.at(value, where[chosen], gradient[chosen])
    np.add.at(bound, where[chosen], np.abs(gradient[chosen]))
    shaped = [a.reshape(data.shape).astype(np.float64) for a in (value, bound)]
    return {"OutputGradientTensor": (shaped[0], shaped[1], shaped[1])}


EXACT = {
    "AVERAGE_POOLING": _average_exact,
    "AVERAGE_POOLING1": _average_exact,
    "AVERAGE_POOLING_GRAD": _average_pooling_grad_exact,
    "MAX_POOLING_GRAD": _max_pooling_grad_exact,
    "LP_POOLING": _lp_exact,
    "LP_POOLING1": _lp_exact,
}


def _rounded(name: str) -> Operator:
    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            with np.errstate(all="ignore"):
                outputs[field] = value.astype(f.dtype(field))
        return outputs

    return run


def _max_unpooling(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """Zeros, then InputTensor's elements in row-major order each written at its flat index
    (an index past the output writes nothing, R1); every write logged (colliding ones, R2)."""
    values = np.asarray(x["InputTensor"]).reshape(-1)
    indices = np.asarray(x["IndicesTensor"]).reshape(-1)
    output = np.zeros(f.sizes("OutputTensor"), f.dtype("OutputTensor"))
    flat = output.reshape(-1)
    cells, written = [], []
    for value, index in zip(values, indices.tolist(), strict=True):
        if 0 <= int(index) < flat.size:
            flat[int(index)] = value
            cells.append(int(index))
            written.append(value)
    log.setdefault("OutputTensor", []).append(
        (np.array(cells, dtype=np.int64), np.array(written, dtype=output.dtype))
    )
    return {"OutputTensor": output}


POOLING: dict[str, Operator] = {
    **{name: _rounded(name) for name in EXACT},
    "MAX_POOLING": _max_pooling,
    "MAX_POOLING1": _max_pooling,
    "MAX_POOLING2": _max_pooling,
    "MAX_UNPOOLING": _max_unpooling,
    "QUANTIZED_LINEAR_AVERAGE_POOLING": _quantized_linear_average_pooling,
}

_EMPTY_MAX = (
    "A window wholly in the padding (R1) gets 0, and index 0; a NaN in a window (R1, "
    "undefined) is never larger than the maximum so far, so the reference skips it unless the "
    "window's first element is one."
)
UNDEFINED_NOTES: dict[str, str] = {
    "MAX_POOLING": _EMPTY_MAX,
    "MAX_POOLING1": _EMPTY_MAX,
    "MAX_POOLING2": _EMPTY_MAX,
    "AVERAGE_POOLING": "With IncludePadding FALSE, a window wholly in the padding (R1) divides "
    "0 by 0: NaN.",
    "AVERAGE_POOLING1": "As AVERAGE_POOLING.",
    "MAX_UNPOOLING": "An index past the output (R1) writes nothing; among indices addressing one "
    "cell (R2) the last write stays.",
    "QUANTIZED_LINEAR_AVERAGE_POOLING": "The page: 'A scale value of 0 results in undefined "
    "behavior' (R1, R2). round() names no tie rule; the reference rounds halves to even. A NaN "
    "quotient (a zero or non-finite scale, R1-R4, or a window wholly in the padding with "
    "IncludePadding FALSE, R5) has no quantized value; the reference writes 0, as "
    "ELEMENT_WISE_QUANTIZE_LINEAR's reference does.",
}
