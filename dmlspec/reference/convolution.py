"""The convolution family (convolution, matrix multiplication, attention), written from the
DirectML pages; so far GEMM.

Each operator is computed in FLOAT64 (every product of two FLOAT32 or FLOAT16 values is exact
there; a sum of K of them is within K * 2^-53 of the sum of their absolute values, 2^29 times
below what FLOAT32 accumulation is allowed), then its FusedActivation, then one rounding to the
output type. `EXACT` gives, per operator, that FLOAT64 result before the
activation, its bound, the same computation on absolute values (|Alpha| * sum |a * b| +
|Beta| * |c|), and the largest magnitude an intermediate reaches (the sum before Alpha scales
it): what the dot-product accuracy model (dmlspec.accuracy) judges a result by.

GEMM: "Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C)", BatchCount *
ChannelCount independent {M, K} x {K, N} products over the leading dimensions.
"""

from __future__ import annotations

from collections.abc import Callable
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


def _windowed(f: Fields, x: Inputs, magnitude: bool) -> np.ndarray:
    """CONVOLUTION without its bias, in FLOAT64 (on absolute values where `magnitude`), one
    filter element (window offset) at a time.

    FORWARD: output[n, o, p] = sum over the group's input channels c and window offsets j of
    input[n, c, p * Strides + j * Dilations - StartPadding] * filter[o, c, j], the input zero
    outside its sizes; filter {OutputChannelCount, InputChannelCount / GroupCount, window...}.
    BACKWARD (transposed): each input element spreads its window into the output,
    output[n, o, i * Strides + j * Dilations - StartPadding] += input[n, c, i] * filter[c, o, j];
    filter {InputChannelCount, OutputChannelCount / GroupCount, window...}. Mode: the page's
    table gives the filter's orientation as a gathering window sees it, flipped ("transposed
    along x,y axes") for CONVOLUTION with FORWARD and for CROSS_CORRELATION with BACKWARD; the
    scatter form above sees the BACKWARD filter flipped once more, so in both forms here the
    filter is flipped along every spatial dimension exactly for Mode CONVOLUTION.
    OutputPadding: FORWARD, zeros after the windows that fit; BACKWARD, the output's end
    extends into the transposed result (cells it does not reach stay 0), as ONNX's
    ConvTranspose output_padding.
    """
    spatial = f.integer("DimensionCount")
    strides = f.integers("Strides", spatial)
    dilations = f.integers("Dilations", spatial)
    start = f.integers("StartPadding", spatial)
    groups = f.integer("GroupCount")
    data = np.asarray(x["InputTensor"], dtype=np.float64)
    weights = np.asarray(x["FilterTensor"], dtype=np.float64)
    if magnitude:
        data, weights = np.abs(data), np.abs(weights)
    backward = f.enum("Direction") == "BACKWARD"
    if f.enum("Mode") == "CONVOLUTION":
        weights = weights[(slice(None), slice(None), *[slice(None, None, -1)] * spatial)]
    out_sizes = f.sizes("OutputTensor")
    batch, outputs = out_sizes[0], out_sizes[1]
    # FORWARD: the windows that fit; OutputPadding's cells after them stay 0
    counts = [
        n - p for n, p in zip(out_sizes[2:], f.integers("OutputPadding", spatial), strict=True)
    ]
    inputs = data.shape[1]
    result = np.zeros(out_sizes, np.float64)
    for offset in np.ndindex(*weights.shape[2:]):
        tap = weights[(slice(None), slice(None), *offset)]  # {O, C/G} or {C, O/G}
        if not backward:
            picked = data  # input[p * stride + j * dilation - start] for each output p, or 0
            for d in range(spatial):
                positions = np.arange(counts[d]) * strides[d] + offset[d] * dilations[d] - start[d]
                inside = (positions >= 0) & (positions < data.shape[2 + d])
                taken = np.take(picked, np.clip(positions, 0, data.shape[2 + d] - 1), axis=2 + d)
                shape = [1] * taken.ndim
                shape[2 + d] = -1
                picked = np.where(inside.reshape(shape), taken, 0.0)  # the padding's zeros
            grouped = picked.reshape(batch, groups, inputs // groups, *counts)
            taps = tap.reshape(groups, outputs // groups, inputs // groups)
            summed = np.einsum("ngc...,goc->ngo...", grouped, taps).reshape(batch, outputs, *counts)
            result[(slice(None), slice(None), *[slice(0, n) for n in counts])] += summed
        else:
            grouped = data.reshape(batch, groups, inputs // groups, *data.shape[2:])
            taps = tap.reshape(groups, inputs // groups, outputs // groups)
            spread = np.einsum("ngc...,gco->ngo...", grouped, taps).reshape(
                batch, outputs, *data.shape[2:]
            )
            # input position i lands on i * stride + j * dilation - start, where inside
            target: list[Any] = [slice(None), slice(None)]
            source: list[Any] = [slice(None), slice(None)]
            for d in range(spatial):
                positions = (
                    np.arange(data.shape[2 + d]) * strides[d] + offset[d] * dilations[d] - start[d]
                )
                inside = (positions >= 0) & (positions < out_sizes[2 + d])
                source.append(np.flatnonzero(inside))
                target.append(positions[inside])
            if all(len(t) for t in target[2:]):
                result[np.ix_(*[np.arange(n) for n in (batch, outputs)], *target[2:])] += spread[
                    np.ix_(*[np.arange(n) for n in (batch, outputs)], *source[2:])
                ]
    return result


def _convolution_exact(
    f: Fields, x: Inputs
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    with np.errstate(all="ignore"):
        value = _windowed(f, x, magnitude=False)
        bound = _windowed(f, x, magnitude=True)
        largest = bound.copy()
        if "BiasTensor" in x:
            bias = np.asarray(x["BiasTensor"], dtype=np.float64)  # {1, C, 1, ...}: broadcast
            value = value + bias
            bound = bound + np.abs(bias)
            largest = np.maximum(largest, bound)
    return {"OutputTensor": (value, bound, largest)}


EXACT: dict[str, Exact] = {"GEMM": _gemm_exact, "CONVOLUTION": _convolution_exact}


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


CONVOLUTION: dict[str, Operator] = {name: _rounded(name) for name in EXACT}
