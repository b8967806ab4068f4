"""Reductions and scans, written from the DirectML pages: REDUCE (every DML_REDUCE_FUNCTION),
ARGMIN, ARGMAX, TOP_K, TOP_K1, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT and
NONZERO_COORDINATES.

Numbers: float tensors are computed in float64 (sums exactly, with math.fsum) and rounded
once to the output type; integer tensors exactly, on Python integers, then wrapped to the
output width (two's complement), the pages giving no overflow rule. A float result written into
an integer tensor (a desc no support table allows) goes toward zero, saturating, NaN -> 0.

NaN and signed zeros, where the pages are silent (`UNDEFINED_NOTES`), follow one rule: NaN
propagates (MIN, MAX, and ARGMIN/ARGMAX point at a NaN), TOP_K ranks NaN above every number,
and -0 equals +0 in every comparison except that MIN picks -0 and MAX picks +0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidOperator
from .fields import Fields, Inputs, Operator, Outputs, exact_sizes, right_aligned, wrap
from .tensors import WriteLog

__all__ = ["REDUCTIONS", "UNDEFINED_NOTES"]


# ---- numbers -------------------------------------------------------------------------------


def _store(value: Any, dtype: np.dtype[Any]) -> Any:
    """One result in the output type: floats round once, integers wrap, a float into an
    integer type goes toward zero, saturating (NaN -> 0)."""
    if dtype.kind == "f":
        return np.array(float(value), dtype=np.float64).astype(dtype)[()]
    if isinstance(value, float):
        if math.isnan(value):
            return dtype.type(0)
        info = np.iinfo(dtype)
        if math.isinf(value):
            return dtype.type(info.max if value > 0 else info.min)
        return dtype.type(min(max(math.trunc(value), int(info.min)), int(info.max)))
    return dtype.type(wrap(int(value), dtype))


def _elements(row: np.ndarray) -> list[Any]:
    """A row's elements as Python numbers: floats as float64 (exact), integers exact."""
    if row.dtype.kind == "f":
        return [float(v) for v in row.astype(np.float64)]
    return [int(v) for v in row]


def _sum(values: Sequence[Any]) -> Any:
    """The exact sum: integers exactly; floats correctly rounded to float64 (math.fsum), with
    IEEE's rules for infinities and NaN (inf + -inf is NaN)."""
    if not values or not isinstance(values[0], float):
        return sum(values)
    if any(math.isnan(v) for v in values):
        return math.nan
    infinities = {v for v in values if math.isinf(v)}
    if infinities:
        return math.nan if len(infinities) == 2 else infinities.pop()
    try:
        return math.fsum(values)
    except OverflowError:  # the exact sum is finite but past float64's range
        return math.copysign(math.inf, sum(values))


def _product(values: Sequence[Any]) -> Any:
    """x1 * x2 * ... * xn, left to right (exact for integers; float64 for floats)."""
    result: Any = 1 if not values or not isinstance(values[0], float) else 1.0
    for v in values:
        result = result * v
    return result


def _log(value: float) -> float:
    """Natural log, IEEE-style: log(0) = -inf, log of a negative number = NaN."""
    if math.isnan(value) or value < 0:
        return math.nan
    return -math.inf if value == 0 else math.log(value)


def _log_sum_exp(values: Sequence[Any]) -> float:
    """log(exp(x1) + ... + exp(xn)), computed as m + log(sum(exp(x - m))) with m the largest
    element (the same value, without overflowing float64)."""
    reals = [float(v) for v in values]
    if any(math.isnan(v) for v in reals):
        return math.nan
    largest = max(reals)
    if math.isinf(largest):
        return largest
    return largest + math.log(math.fsum(math.exp(v - largest) for v in reals))


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _extreme(values: Sequence[Any], largest: bool) -> int:
    """MIN or MAX ("x = max(max(max(x1, x2), x3), ..., xn)"), as the index of the element it
    gives: the first NaN (NaN propagates); else the extreme, where among equal values -0 counts
    below +0 (MIN gives -0, MAX gives +0)."""
    for i, v in enumerate(values):
        if _is_nan(v):
            return i

    def rank(i: int) -> tuple[Any, bool]:
        v = values[i]
        return v, not (isinstance(v, float) and math.copysign(1.0, v) < 0)

    indices = range(len(values))
    return max(indices, key=rank) if largest else min(indices, key=rank)


def _arg_extreme(values: Sequence[Any], largest: bool, direction: str) -> int:
    """ARGMIN/ARGMAX: the index of the extreme element. Ties: DML_AXIS_DIRECTION_INCREASING
    "returns the index of the first [extreme]-valued element", DECREASING "the index of the
    last". -0 and +0 tie (they compare equal); a NaN counts as the extreme (the first NaN in
    the direction)."""
    order = range(len(values)) if direction == "INCREASING" else range(len(values) - 1, -1, -1)
    best: int | None = None
    for i in order:
        if _is_nan(values[i]):
            return i
        if best is None or (values[i] > values[best] if largest else values[i] < values[best]):
            best = i
    return 0 if best is None else best


# DML_REDUCE_FUNCTION as its page writes each, on a row's Python numbers (MIN and MAX, which
# pick an element, are `_extreme`).
_FUNCTIONS: dict[str, Callable[[list[Any]], Any]] = {
    "SUM": _sum,  # x = (x1 + x2 + ... + xn)
    "AVERAGE": lambda v: _sum(v) / len(v),  # x = (x1 + x2 + ... + xn) / n
    "L1": lambda v: _sum([abs(e) for e in v]),  # x = |x1| + |x2| + ... + |xn|
    "L2": lambda v: math.sqrt(_sum([float(e) * e for e in v])),  # sqrt(x1^2 + ... + xn^2)
    "SUM_SQUARE": lambda v: _sum([e * e for e in v]),  # x = x1^2 + x2^2 + ... + xn^2
    "MULTIPLY": _product,  # x = (x1 * x2 * ... * xn)
    "LOG_SUM": lambda v: _log(float(_sum(v))),  # x = log(x1 + x2 + ... + xn)
    "LOG_SUM_EXP": _log_sum_exp,  # x = log(exp(x1) + exp(x2) + ... + exp(xn))
}


def _reduced_rows(data: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, tuple[int, ...]]:
    """The elements each output reduces, as rows: the kept dimensions first, then the reduced
    ones flattened row-major in increasing dimension order ("each output index is with
    respect to the provided input axes": ARGMIN over all axes of a 3x3 tensor gives 4 for
    the element at {1, 1}). Also the output's shape (reduced dimensions of size 1)."""
    kept = [d for d in range(data.ndim) if d not in axes]
    rows = np.transpose(data, kept + list(axes))
    rows = rows.reshape((*tuple(data.shape[d] for d in kept), -1))
    shape = tuple(1 if d in axes else n for d, n in enumerate(data.shape))
    return rows, shape


def _axes(f: Fields, rank: int) -> list[int]:
    axes = sorted(set(f.integers("Axes")))
    if any(not 0 <= a < rank for a in axes):
        raise InvalidOperator(f"Axes in {f.spec.name} must lie in [0, {rank}); got {axes}")
    return axes


def _reduce(f: Fields, x: Inputs, function: str, direction: str) -> Outputs:
    data = np.asarray(x["InputTensor"])
    dtype = f.dtype("OutputTensor")
    rows, shape = _reduced_rows(data, _axes(f, data.ndim))
    output = np.empty(rows.shape[:-1], dtype=dtype)
    for k in np.ndindex(*rows.shape[:-1]):
        values = _elements(rows[k])
        if function in ("ARGMIN", "ARGMAX"):
            output[k] = _store(_arg_extreme(values, function == "ARGMAX", direction), dtype)
        elif function in ("MIN", "MAX"):
            i = _extreme(values, largest=function == "MAX")
            # the element itself, bits and all, where the types agree
            output[k] = rows[k][i] if dtype == data.dtype else _store(values[i], dtype)
        else:
            output[k] = _store(_FUNCTIONS[function](values), dtype)
    return {"OutputTensor": exact_sizes(output.reshape(shape), f, "OutputTensor")}


def reduce(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """REDUCE: each output element is Function over the elements of the reduced Axes.
    ARGMIN/ARGMAX equal the ARGMIN/ARGMAX operators with DML_AXIS_DIRECTION_INCREASING."""
    return _reduce(f, x, f.enum("Function"), "INCREASING")


def argmin(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """ARGMIN: the index of the minimum over Axes; AxisDirection breaks ties."""
    return _reduce(f, x, "ARGMIN", f.enum("AxisDirection"))


def argmax(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """ARGMAX: the index of the maximum over Axes; AxisDirection breaks ties."""
    return _reduce(f, x, "ARGMAX", f.enum("AxisDirection"))


# ---- TOP_K ---------------------------------------------------------------------------------


def _top_k(f: Fields, x: Inputs, largest: bool) -> Outputs:
    """The K largest (or smallest) elements of each sequence along Axis, with their indices.
    Values are "sorted descending (largest to smallest)" (ascending for the smallest); "when
    there is a tie, the indices of both elements are included, and are guaranteed to be
    ordered by ascending element index ... irrespective of the value of AxisDirection".
    NaN ranks above every number; -0 ties with +0. If K exceeds the sequence (the page
    requires it not to), the positions past it hold 0."""
    data = np.asarray(x["InputTensor"])
    axis, k = f.axis(data.ndim), f.integer("K")
    sequences = np.moveaxis(data, axis, -1)
    values = np.zeros((*sequences.shape[:-1], k), dtype=f.dtype("OutputValueTensor"))
    indices = np.zeros((*sequences.shape[:-1], k), dtype=f.dtype("OutputIndexTensor"))
    for s in np.ndindex(*sequences.shape[:-1]):
        elements = _elements(sequences[s])

        def rank(i: int, elements: list[Any] = elements) -> tuple[bool, Any]:
            return _is_nan(elements[i]), 0.0 if _is_nan(elements[i]) else elements[i]

        # Python's sort is stable, with reverse=True too: equal ranks keep ascending indices.
        chosen = sorted(range(len(elements)), key=rank, reverse=largest)[:k]
        for j, i in enumerate(chosen):
            values[(*s, j)] = sequences[(*s, i)]
            indices[(*s, j)] = i
    return {
        "OutputValueTensor": exact_sizes(np.moveaxis(values, -1, axis), f, "OutputValueTensor"),
        "OutputIndexTensor": exact_sizes(np.moveaxis(indices, -1, axis), f, "OutputIndexTensor"),
    }


def top_k(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """TOP_K: "Selects the largest K elements from each sequence along an axis"."""
    return _top_k(f, x, largest=True)


def top_k1(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """TOP_K1: "If set to DML_AXIS_DIRECTION_INCREASING, then this operator returns the
    smallest K elements in order of increasing value. Otherwise, it returns the largest K
    elements in decreasing order"."""
    return _top_k(f, x, largest=f.enum("AxisDirection") == "DECREASING")


# ---- scans ---------------------------------------------------------------------------------


def _scan(f: Fields, x: Inputs, exclusive_field: str, multiply: bool) -> Outputs:
    """A running sum or product along Axis, "by ascending element index" for
    DML_AXIS_DIRECTION_INCREASING and by descending index for DECREASING. Inclusive, output k
    is x1 (op) ... (op) xk (the first output is x1 itself, -0 included); exclusive ("the value
    of the current element is excluded"), output k is x1 (op) ... (op) x(k-1), and the first
    is the identity (+0 or 1). Floats run in float64 and each output is rounded once;
    integers run exactly (modulo 2^64, which the output's wrap does not see) and wrap."""
    data = np.asarray(x["InputTensor"])
    axis = f.axis(data.ndim)
    dtype = f.dtype("OutputTensor")
    exclusive = f.flag(exclusive_field)
    reverse = f.enum("AxisDirection") == "DECREASING"
    sequences = np.moveaxis(data, axis, -1)
    output = np.empty(sequences.shape, dtype=dtype)
    for s in np.ndindex(*sequences.shape[:-1]):
        elements = _elements(sequences[s])
        is_float = sequences.dtype.kind == "f"
        identity: Any = (1.0 if multiply else 0.0) if is_float else (1 if multiply else 0)
        tally: Any = None
        order = range(len(elements) - 1, -1, -1) if reverse else range(len(elements))
        for i in order:
            if exclusive:
                output[(*s, i)] = _store(identity if tally is None else tally, dtype)
            if tally is None:
                tally = elements[i]
            else:
                tally = tally * elements[i] if multiply else tally + elements[i]
            if not is_float:
                tally %= 1 << 64
            if not exclusive:
                output[(*s, i)] = _store(tally, dtype)
    return {"OutputTensor": exact_sizes(np.moveaxis(output, -1, axis), f, "OutputTensor")}


def cumulative_summation(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """CUMULATIVE_SUMMATION: "Sums the elements of a tensor along an axis, writing the running
    tally of the summation into the output tensor"."""
    return _scan(f, x, "HasExclusiveSum", multiply=False)


def cumulative_product(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """CUMULATIVE_PRODUCT: "Multiplies the elements of a tensor along an axis, writing the
    running tally of the product into the output tensor"."""
    return _scan(f, x, "HasExclusiveProduct", multiply=True)


# ---- NONZERO_COORDINATES -------------------------------------------------------------------


def nonzero_coordinates(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """NONZERO_COORDINATES: the count of non-zero elements ("both negative and positive 0 ...
    are treated as zero"; NaN is not zero), and their coordinates "ordered by ascending
    element index", one per row of the {.., M, N} OutputCoordinatesTensor. A row holds the
    last N coordinates, right-aligned (the page's example: {1,1,2,4} input, N = 3, element
    {0,0,1,3} -> [0,1,3]); with N above the input's DimensionCount the row starts with 0s.
    "The remaining elements of this tensor beyond the OutputCount are undefined": the
    reference writes 0 there; coordinates past M rows are dropped."""
    data = np.asarray(x["InputTensor"])
    sizes = f.sizes("OutputCoordinatesTensor")
    if len(sizes) < 2:
        raise InvalidOperator("NONZERO_COORDINATES' OutputCoordinatesTensor needs {.., M, N}")
    rows, width = sizes[-2], sizes[-1]
    coordinates = np.zeros((rows, width), dtype=f.dtype("OutputCoordinatesTensor"))
    count = 0
    for c in np.ndindex(*data.shape):
        if data[c] == 0:
            continue
        if count < rows:
            padded = (0,) * max(width - len(c), 0) + c
            coordinates[count] = padded[len(padded) - width :]
        count += 1
    count_sizes, count_dtype = f.sizes("OutputCountTensor"), f.dtype("OutputCountTensor")
    return {
        "OutputCountTensor": np.full(count_sizes, _store(count, count_dtype), dtype=count_dtype),
        "OutputCoordinatesTensor": right_aligned(coordinates, sizes, f, "OutputCoordinatesTensor"),
    }


# ---- the table -----------------------------------------------------------------------------

REDUCTIONS: dict[str, Operator] = {
    "REDUCE": reduce,
    "ARGMIN": argmin,
    "ARGMAX": argmax,
    "TOP_K": top_k,
    "TOP_K1": top_k1,
    "CUMULATIVE_SUMMATION": cumulative_summation,
    "CUMULATIVE_PRODUCT": cumulative_product,
    "NONZERO_COORDINATES": nonzero_coordinates,
}

_NAN_EXTREMES = (
    "NaN: the pages define MIN/MAX and ARGMIN/ARGMAX by comparisons, undefined for NaN; the "
    "reference propagates NaN (MIN/MAX give the first NaN; ARGMIN/ARGMAX point at the first "
    "NaN in AxisDirection's order). -0 and +0 tie for ARGMIN/ARGMAX; MIN gives -0, MAX +0. "
    "An index over several axes is row-major over the reduced axes in increasing dimension "
    "order, whatever order Axes lists them in (the page: 'each output index is with respect "
    "to the provided input axes'; its all-axes example gives 4 for {1, 1} of a 3x3 input)."
)

UNDEFINED_NOTES: dict[str, str] = {
    "REDUCE": _NAN_EXTREMES + " Integer SUM, MULTIPLY, L1 and SUM_SQUARE beyond the output "
    "type: no overflow rule; the reference wraps (the exact result modulo 2^bits).",
    "ARGMIN": _NAN_EXTREMES,
    "ARGMAX": _NAN_EXTREMES,
    "TOP_K": "NaN: the page orders values without saying where NaN goes; the reference ranks "
    "NaN above every number (first among the largest). K past the sequence: zeros.",
    "TOP_K1": "NaN ranks above every number: first among the largest, last among the "
    "smallest (never chosen while K numbers remain). K past the sequence: zeros.",
    "CUMULATIVE_SUMMATION": "Integer overflow: the reference wraps. The exclusive first "
    "output is +0; the inclusive first output is the element itself (-0 stays -0).",
    "CUMULATIVE_PRODUCT": "Integer overflow: the reference wraps. The exclusive first output is 1.",
    "NONZERO_COORDINATES": "Rows past OutputCount are undefined; the reference writes 0. NaN "
    "is not zero (the page names only the two zeros as zero). With N above the input's "
    "DimensionCount rows start with 0s; with N below its effective rank (invalid) a row keeps "
    "the last N coordinates; coordinates past M rows are dropped.",
}
