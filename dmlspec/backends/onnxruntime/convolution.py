"""The convolution family for the onnxruntime backend (convolution, matrix multiplication,
attention); so far GEMM, as ONNX's MatMul over the leading (batch, channel) dimensions.

GEMM: Transpose where TransA/TransB ask, MatMul in FLOAT32 (FLOAT16 inputs widened first, as
DirectML accumulates them), then Alpha * product + Beta * C, the FusedActivation's graph, and
one cast to the output type. ONNX's Gemm takes 2-D matrices only, so MatMul serves every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .element_wise import fused_activation
from .graph import Builder, Call, run_operator

__all__ = ["OPERATORS", "run"]


def _gemm(c: Call) -> dict[str, str]:
    g = c.g
    g.shape = tuple(c.sizes("OutputTensor"))  # the shape an activation (softmax's axes) sees
    wide = np.float32
    a = g.cast(c.feed("ATensor"), wide)
    b = g.cast(c.feed("BTensor"), wide)
    rank = len(c.sizes("ATensor"))
    swap = [*range(rank - 2), rank - 1, rank - 2]
    if c.enum("TransA", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        a = g.op("Transpose", a, perm=swap)
    if c.enum("TransB", "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        b = g.op("Transpose", b, perm=swap)
    product = g.op("MatMul", a, b)
    result = g.op("Mul", product, g.scalar(float(c.desc.get("Alpha", 1.0)), product))
    if c.given("CTensor"):
        bias = g.cast(c.feed("CTensor"), wide)
        scaled = g.op("Mul", bias, g.scalar(float(c.desc.get("Beta", 1.0)), bias))
        result = g.op("Add", result, scaled)
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


def _convolution(c: Call) -> dict[str, str]:
    """CONVOLUTION as ONNX's Conv (FORWARD; OutputPadding's zeros by Pad) or ConvTranspose
    (BACKWARD, whose filter layout and output_padding are DirectML's), in FLOAT32. ONNX
    convolves as a cross-correlation (ConvTranspose as its gradient), so Mode CONVOLUTION gets
    the filter flipped along its spatial dimensions first."""
    g = c.g
    out_sizes = c.sizes("OutputTensor")
    g.shape = tuple(out_sizes)
    spatial = len(out_sizes) - 2
    wide = np.float32
    weights = c.array("FilterTensor")
    if c.enum("Mode", "DML_CONVOLUTION_MODE_") == "CONVOLUTION":
        weights = np.ascontiguousarray(np.flip(weights, tuple(range(2, weights.ndim))))
    x = g.cast(c.feed("InputTensor"), wide)
    w = g.cast(g.feed(weights), wide)

    def ints(field: str) -> list[int]:
        return [int(v) for v in c.desc[field]]

    attributes: dict[str, Any] = {
        "strides": ints("Strides"),
        "dilations": ints("Dilations"),
        "pads": ints("StartPadding") + ints("EndPadding"),
        "group": int(c.desc["GroupCount"]),
    }
    if c.enum("Direction", "DML_CONVOLUTION_DIRECTION_") == "BACKWARD":
        # The whole transposed result, then the output's window of it: from StartPadding, its
        # end zeros where it runs past (onnxruntime refuses an output_padding of
        # max(stride, dilation) or more, and an empty intermediate).
        attributes["pads"] = [0] * (2 * spatial)
        result = g.op("ConvTranspose", x, w, **attributes)
        inputs, window = c.sizes("InputTensor")[2:], list(weights.shape[2:])
        full = [
            (n - 1) * s + (k - 1) * d + 1
            for n, k, s, d in zip(inputs, window, ints("Strides"), ints("Dilations"), strict=True)
        ]
        start = ints("StartPadding")
        stop = [b + n for b, n in zip(start, out_sizes[2:], strict=True)]
        beyond = [max(0, e - f) for e, f in zip(stop, full, strict=True)]
        if any(beyond):
            result = g.op("Pad", result, g.int64([0] * (2 + spatial) + [0, 0, *beyond]))
        axes = list(range(2, 2 + spatial))
        result = g.op("Slice", result, g.int64(start), g.int64(stop), g.int64(axes))
    else:
        result = g.op("Conv", x, w, **attributes)
        zeros = ints("OutputPadding")
        if any(zeros):
            result = g.op("Pad", result, g.int64([0] * (2 + spatial) + [0, 0, *zeros]))
    if c.given("BiasTensor"):
        result = g.op("Add", result, g.cast(c.feed("BiasTensor"), wide))
    return {"OutputTensor": fused_activation(g, result, c.desc.get("FusedActivation"))}


OPERATORS: dict[str, Builder] = {"GEMM": _gemm, "CONVOLUTION": _convolution}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
