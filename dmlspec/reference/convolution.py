"""The convolution family (convolution, matrix multiplication, attention), written from the
DirectML pages; so far GEMM, FOLD and UNFOLD.

Each operator is computed in FLOAT64 (every product of two FLOAT32 or FLOAT16 values is exact
there; a sum of K of them is within K * 2^-53 of the sum of their absolute values, 2^29 times
below what FLOAT32 accumulation is allowed), then its FusedActivation, then one rounding to the
output type. `EXACT` gives, per operator, that FLOAT64 result before the
activation, its bound, the same computation on absolute values (|Alpha| * sum |a * b| +
|Beta| * |c|), and the largest magnitude an intermediate reaches (the sum before Alpha scales
it): what the dot-product accuracy model (dmlspec.accuracy) judges a result by.

GEMM: "Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)", BatchCount *
ChannelCount independent {M, K} x {K, N} products over the leading dimensions.

UNFOLD and FOLD: the pages' blocks visited one window element at a time (direct loops): UNFOLD
copies each into its column, FOLD adds each back ("by summing the overlapping values"), each a
product by 1 for the accuracy model; integers summed exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["CONVOLUTION", "EXACT", "Exact"]

# operator -> (fields, logical inputs) -> {output: (FLOAT64 value, FLOAT64 bound, FLOAT64
# largest intermediate magnitude)}, before the FusedActivation.
Exact = Callable[[Fields, Inputs], dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _matrix(array: np.ndarray, transform: str) -> np.ndarray:
    wide = np.asarray(array, dtype=np.float64)
    return np.swapaxes(wide, -1, -2) if transform.endswith("TRANSPOSE") else wide


def _gemm_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    a = _matrix(x["ATensor"], f.enum("TransA"))
    b = _matrix(x["BTensor"], f.enum("TransB"))
    alpha = f.float32("Alpha") if f.present("Alpha") else 1.0
    beta = f.float32("Beta") if f.present("Beta") else 1.0
    with np.errstate(all="ignore"):
        products = np.matmul(np.abs(a), np.abs(b))
        value = alpha * np.matmul(a, b)
        bound = abs(alpha) * products
        largest = np.maximum(products, bound)  # the sum before Alpha scales it
        if "CTensor" in x:
            c = np.asarray(x["CTensor"], dtype=np.float64)
            value = value + beta * c
            bound = bound + abs(beta) * np.abs(c)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


def _windows(f: Fields, spatial: tuple[int, ...]) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """The page's blocks, one element at a time: (k, l, p) for window element k (row-major over
    WindowSizes) of block l (row-major over BlocksPerDimension), p its position in the
    unpadded spatial dimensions, for the elements that fall inside them (not in the padding).
    BlocksPerDimension[d] = ((SpatialSize[d] + StartPadding[d] + EndPadding[d] -
    Dilations[d] * (WindowSizes[d] - 1) - 1) / stride[d]) + 1."""
    count = len(spatial)
    window = f.integers("WindowSizes", count)
    strides = f.integers("Strides", count)
    dilations = f.integers("Dilations", count)
    start = f.integers("StartPadding", count)
    end = f.integers("EndPadding", count)
    blocks = [
        (spatial[d] + start[d] + end[d] - dilations[d] * (window[d] - 1) - 1) // strides[d] + 1
        for d in range(count)
    ]
    for index, block in enumerate(itertools.product(*(range(b) for b in blocks))):
        for k, offset in enumerate(itertools.product(*(range(w) for w in window))):
            p = tuple(
                block[d] * strides[d] + offset[d] * dilations[d] - start[d] for d in range(count)
            )
            if all(0 <= p[d] < spatial[d] for d in range(count)):
                yield k, index, p


def _unfold(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """OutputTensor[n, c * prod(WindowSizes) + k, l] = InputTensor[n, c, p...]; 0 in the
    padding."""
    data = np.asarray(x["InputTensor"])
    _, channels, *spatial = data.shape
    window = math.prod(f.integers("WindowSizes", len(spatial)))
    output = np.zeros(f.sizes("OutputTensor"), f.dtype("OutputTensor"))
    for k, block, p in _windows(f, tuple(spatial)):
        for c in range(channels):
            at: tuple[Any, ...] = (slice(None), c, *p)
            output[:, c * window + k, block] = data[at]
    return {"OutputTensor": output}


def _fold_sums(f: Fields, data: np.ndarray, dtype: Any) -> np.ndarray:
    """OutputTensor[n, c, p...] = the sum, in `dtype`, of InputTensor[n, c * prod(WindowSizes)
    + k, l] over the window elements (k, l) at p."""
    n, channels, *spatial = f.sizes("OutputTensor")
    window = math.prod(f.integers("WindowSizes", len(spatial)))
    total = np.zeros((n, channels, *spatial), dtype)
    for k, block, p in _windows(f, tuple(spatial)):
        for c in range(channels):
            at: tuple[Any, ...] = (slice(None), c, *p)
            total[at] += data[:, c * window + k, block].astype(dtype)
    return total


def _fold_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The sums in FLOAT64 (FLOAT64 data in long double, where the platform has a wider one,
    so that the reference's own rounding stays below a FLOAT64 result's allowance) and the sums
    of absolute values, the bound."""
    data = np.asarray(x["InputTensor"])
    wide = np.longdouble if data.dtype == np.float64 else np.float64
    value = _fold_sums(f, data, wide).astype(np.float64)
    bound = _fold_sums(f, np.abs(data.astype(np.float64)), wide).astype(np.float64)
    return {"OutputTensor": (value, bound, bound)}


def _fold(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """Floats: the FLOAT64 sums rounded once; integers: summed in 64 bits (the type's own
    result while no sum overflows, FOLD.R1)."""
    data = np.asarray(x["InputTensor"])
    output_type = f.dtype("OutputTensor")
    if data.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return {"OutputTensor": _fold_exact(f, x)["OutputTensor"][0].astype(output_type)}
    wide = np.uint64 if data.dtype.kind == "u" else np.int64
    with np.errstate(all="ignore"):
        return {"OutputTensor": _fold_sums(f, data, wide).astype(output_type)}


EXACT: dict[str, Exact] = {"GEMM": _gemm_exact, "FOLD": _fold_exact}


def _rounded(name: str) -> Operator:
    """The operator as the reference runs it: exact, activated, rounded once."""

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        outputs: dict[str, Any] = {}
        for field, (value, _, _) in EXACT[name](f, x).items():
            with np.errstate(all="ignore"):
                activated = fused_activation(name, f.desc.get("FusedActivation"), value)
                outputs[field] = activated.astype(f.dtype(field))
        return outputs

    return run


CONVOLUTION: dict[str, Operator] = {
    **{name: _rounded(name) for name in EXACT},
    "FOLD": _fold,
    "UNFOLD": _unfold,
}
