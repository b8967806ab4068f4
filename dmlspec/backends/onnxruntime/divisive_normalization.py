"""The divisive normalizations for the onnxruntime backend, in FLOAT32 (FLOAT16 widened first, as
DirectML accumulates): LOCAL_RESPONSE_NORMALIZATION as LRN, LP_NORMALIZATION as
LpNormalization, LOCAL_RESPONSE_NORMALIZATION_GRAD from the gradient's formula.

Divergences, each handled here:
- onnxruntime's LRN (Caffe2's) keeps a running sum across the channels, adding the square that
  enters the region and subtracting the one that leaves it: rounding of squares that left
  stays in the sum (2e-5 relative errors with Bias 0) and a NaN or infinity that passed
  poisons every channel after it (both found by the suite); it also refuses an even size, an
  Alpha or Beta not above 0, and allocates its padding for the whole size. So LRN runs only
  on a single channel (no running update), odd sizes, Alpha and Beta above 0; everything else
  sums the squares by a Conv of ones over the region (channels, or height by width, of a
  one-channel view: the region clipped to the tensor as the Conv's zero padding) and applies
  the page's formula with Pow. The gradient, which ONNX lacks outside onnxruntime's training
  operators, is its formula on the same sums, the regions holding each element summed by the
  same Conv with the padding mirrored.
- ONNX's LpNormalization has no epsilon (it divides by the norm alone, the spec's
  max(norm, Epsilon) reading where the norm is at least Epsilon): where the norm (ReduceL1 or
  ReduceL2) is below Epsilon the graph divides by Epsilon instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .graph import Call, run_operator

__all__ = ["OPERATORS", "run"]

_WIDE = np.dtype(np.float32)


def _input(c: Call, field: str) -> str:
    return c.g.cast(c.feed(field), _WIDE)


def _scalar(c: Call, value: float) -> str:
    return c.g.feed(np.array(value, _WIDE))


def _region_sum(c: Call, data: str, reverse: bool = False) -> str:
    """Each element's sum of `data` over its local region (reverse: over the elements whose
    regions hold it), as a Conv of ones on a one-channel view."""
    g = c.g
    n, channels, height, width = c.sizes("InputTensor")
    size = int(c.desc["LocalSize"])
    cross = c.flag("CrossChannel")
    # The view's two spatial axes: the channels and the flattened rows (not summed), or the
    # rows and the columns.
    view = [n, 1, channels, height * width] if cross else [n * channels, 1, height, width]
    extents = [channels, None] if cross else [height, width]
    kernel, pads_before, pads_after = [], [], []
    for extent in extents:
        before = 0 if extent is None else min((size - 1) // 2, extent - 1)
        after = 0 if extent is None else min(size - 1 - (size - 1) // 2, extent - 1)
        if reverse:
            before, after = after, before
        kernel.append(before + after + 1)
        pads_before.append(before)
        pads_after.append(after)
    ones = g.feed(np.ones([1, 1, *kernel], _WIDE))
    summed = g.op("Conv", g.reshape(data, view), ones, pads=pads_before + pads_after)
    return g.reshape(summed, c.sizes("InputTensor"))


def _divisor(c: Call, x: str) -> str:
    """D = Bias + Alpha / LocalSize * S."""
    g = c.g
    scale = np.float32(c.desc["Alpha"]) / np.float32(int(c.desc["LocalSize"]))
    total = _region_sum(c, g.op("Mul", x, x))
    bias = _scalar(c, float(c.desc["Bias"]))
    return g.op("Add", bias, g.op("Mul", _scalar(c, float(scale)), total))


def _local_response_normalization(c: Call) -> dict[str, str]:
    g = c.g
    x = _input(c, "InputTensor")
    size = int(c.desc["LocalSize"])
    alpha, beta = float(np.float32(c.desc["Alpha"])), float(np.float32(c.desc["Beta"]))
    single = c.sizes("InputTensor")[1] == 1
    if c.flag("CrossChannel") and single and size % 2 == 1 and size <= 3 and alpha > 0 < beta:
        lrn = g.op(
            "LRN",
            x,
            size=size,
            alpha=alpha,
            beta=beta,
            bias=float(np.float32(c.desc["Bias"])),
        )
        return {"OutputTensor": lrn}
    power = g.op("Pow", _divisor(c, x), _scalar(c, -beta))
    return {"OutputTensor": g.op("Mul", x, power)}


def _local_response_normalization_grad(c: Call) -> dict[str, str]:
    """g D^-Beta - 2 Beta (Alpha / LocalSize) x * (the regions' sums, mirrored, of
    g x D^(-Beta - 1))."""
    g = c.g
    x = _input(c, "InputTensor")
    gradient = _input(c, "InputGradientTensor")
    beta = float(np.float32(c.desc["Beta"]))
    scale = np.float32(c.desc["Alpha"]) / np.float32(int(c.desc["LocalSize"]))
    divisor = _divisor(c, x)
    own = g.op("Mul", gradient, g.op("Pow", divisor, _scalar(c, -beta)))
    steeper = g.op("Pow", divisor, _scalar(c, -beta - 1))
    spread = g.op("Mul", g.op("Mul", gradient, x), steeper)
    held = _region_sum(c, spread, reverse=True)
    factor = _scalar(c, float(2 * np.float32(beta) * scale))
    return {"OutputGradientTensor": g.op("Sub", own, g.op("Mul", factor, g.op("Mul", x, held)))}


def _lp_normalization(c: Call) -> dict[str, str]:
    g = c.g
    x = _input(c, "InputTensor")
    axis, p = int(c.desc["Axis"]), int(c.desc["P"])
    epsilon = _scalar(c, float(np.float32(c.desc["Epsilon"])))
    normalized = g.op("LpNormalization", x, axis=axis, p=p)
    norm = g.op("ReduceL1" if p == 1 else "ReduceL2", x, g.int64([axis]), keepdims=1)
    small = g.compare("Less", norm, epsilon)
    return {"OutputTensor": g.where(small, g.op("Div", x, epsilon), normalized)}


OPERATORS = {
    "LOCAL_RESPONSE_NORMALIZATION": _local_response_normalization,
    "LOCAL_RESPONSE_NORMALIZATION_GRAD": _local_response_normalization_grad,
    "LP_NORMALIZATION": _lp_normalization,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
