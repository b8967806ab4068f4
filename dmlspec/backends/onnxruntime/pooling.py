"""The pooling family for the onnxruntime backend: AVERAGE_POOLING(1) as AveragePool, MAX_POOLING(1,
2) as MaxPool (its Indices output for OutputIndicesTensor), LP_POOLING(1) as LpPool and
MAX_UNPOOLING as MaxUnpool (ScatterElements where MaxUnpool has no kernel) and
AVERAGE_POOLING_GRAD as a depthwise ConvTranspose of ones and MAX_POOLING_GRAD as MaxPool's
indices and ScatterElements' add (ONNX has no pooling gradients outside onnxruntime's training
operators), the first three in
FLOAT32 (FLOAT16 widened first, as DirectML accumulates; MaxPool also in the data's own type
where onnxruntime has a kernel for it).

Divergences, each handled or refused (Unsupported) here:
- onnxruntime's pooling kernels refuse a padding as large as the window ("Pad should be smaller
  than kernel"): the padding is applied first by Pad (zeros for LpPool and for AveragePool with
  IncludePadding TRUE; the type's lowest value for MaxPool). MaxPool's indices then count the
  padded tensor: they are mapped back through a table, and where a window's maximum is the
  lowest value and MaxPool met the padding first, a second MaxPool (over 1.0 where the input
  holds that value, 0.0 in the padding) finds the first input element holding it.
- AveragePool (opset 18) has no dilations, and with count_include_pad 0 needs onnxruntime's own
  padding: a dilated window, or IncludePadding FALSE with a padding as large as the window, is
  summed by a depthwise Conv with a filter of ones and divided by each window's count of input
  elements (the same sum-then-divide the page describes).
- MaxPool has kernels for FLOAT32, FLOAT16, INT8 and UINT8 (and FLOAT64): 16- and 32-bit
  integers are carried in FLOAT64 (exact) and cast back; 64-bit integers are refused (FLOAT64
  does not hold them, and no order-keeping map into a type MaxPool takes exists).
- MaxPool's Indices are INT64 over the whole input, row-major, the first of equal maxima (its
  loop takes a strictly larger value): DirectML's rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .convolution import _per_tensor, _scalar_feed
from .graph import Call, bit_type, run_operator

__all__ = ["OPERATORS", "run"]


def _window(c: Call) -> dict[str, list[int]]:
    spatial = int(c.desc["DimensionCount"])

    def ints(field: str) -> list[int]:
        return [int(v) for v in c.desc[field]] if field in c.desc else [1] * spatial

    return {
        "kernel_shape": ints("WindowSize"),
        "strides": ints("Strides"),
        "dilations": ints("Dilations"),
        "start": ints("StartPadding"),
        "end": ints("EndPadding"),
    }


def _padded(c: Call, value: str, w: dict[str, list[int]], fill: Any) -> str:
    """`value` with StartPadding and EndPadding applied by Pad, the padding `fill`."""
    g = c.g
    pads = [0, 0, *w["start"], 0, 0, *w["end"]]
    return g.op("Pad", value, g.int64(pads), g.feed(np.array(fill, g.dtype(value))))


def _own_padding(w: dict[str, list[int]]) -> bool:
    """Whether onnxruntime's pooling takes the padding (each smaller than the window)."""
    return all(p < k for p, k in zip(w["start"] + w["end"], w["kernel_shape"] * 2, strict=True))


def _attributes(w: dict[str, list[int]], padded: bool, dilated: bool = True) -> dict[str, Any]:
    attributes: dict[str, Any] = {"kernel_shape": w["kernel_shape"], "strides": w["strides"]}
    if dilated:
        attributes["dilations"] = w["dilations"]
    if not padded:
        attributes["pads"] = w["start"] + w["end"]
    return attributes


def _inside_counts(
    c: Call,
    w: dict[str, list[int]],
    inputs: list[int] | None = None,
    outputs: list[int] | None = None,
) -> np.ndarray:
    """Each window's count of input elements, {1, 1, spatial...} (as the kernels count them),
    for a pooling of `inputs` to `outputs` (default: the desc's InputTensor and OutputTensor)."""
    inputs = c.sizes("InputTensor") if inputs is None else inputs
    outputs = c.sizes("OutputTensor") if outputs is None else outputs
    counts = np.ones((1, 1), np.float32)
    for size, k, s, d, b, o in zip(
        inputs[2:],
        w["kernel_shape"],
        w["strides"],
        w["dilations"],
        w["start"],
        outputs[2:],
        strict=True,
    ):
        positions = np.arange(o)[:, None] * s + np.arange(k) * d - b
        counts = np.multiply.outer(counts, ((positions >= 0) & (positions < size)).sum(axis=1))
    return counts.astype(np.float32)


def _average_pooling(c: Call) -> dict[str, str]:
    return {"OutputTensor": _average(c, c.g.cast(c.feed("InputTensor"), np.float32))}


def _average(c: Call, x: str) -> str:
    """AVERAGE_POOLING(1)'s average of the FLOAT32 value `x` (InputTensor's shape)."""
    g = c.g
    w = _window(c)
    include = c.flag("IncludePadding")
    if all(d == 1 for d in w["dilations"]) and (include or _own_padding(w)):
        if include:  # zeros counted: padded first, so any padding is taken
            x = _padded(c, x, w, 0.0)
        return g.op("AveragePool", x, count_include_pad=0, **_attributes(w, include, dilated=False))
    channels = c.sizes("InputTensor")[1]
    ones = g.feed(np.ones([channels, 1, *w["kernel_shape"]], np.float32))
    conv = _attributes(w, padded=False)
    total = g.op("Conv", x, ones, group=channels, **conv)
    count = math.prod(w["kernel_shape"]) if include else _inside_counts(c, w)
    return g.op("Div", total, g.feed(np.asarray(count, np.float32)))


def _channel_feed(c: Call, field: str, dtype: Any) -> str:
    """A per-tensor or per-channel scale or zero point as {ChannelCount} (0s of `dtype` where
    the zero point is absent), for DequantizeLinear's and QuantizeLinear's axis 1."""
    channels = c.sizes("InputTensor")[1]
    value = c.array(field).reshape(-1) if c.given(field) else np.zeros(1, dtype)
    return c.g.feed(np.broadcast_to(value, (channels,)).copy())


def _quantized_linear_average_pooling(c: Call) -> dict[str, str]:
    """com.microsoft QLinearAveragePool where it takes the desc (per-tensor scales and zero
    points, InputTensor and OutputTensor of one type, no dilation, IncludePadding FALSE only
    with padding smaller than the window: with TRUE the padding is InputZeroPoint applied by
    Pad, which dequantizes to 0) and InputScale / OutputScale is finite in FLOAT32 (it divides
    them first: where the quotient overflows it gave 0, not the saturated result); elsewhere the
    page's steps: DequantizeLinear (axis 1), the AVERAGE_POOLING1 graph in FLOAT32,
    QuantizeLinear (halves to even, saturated). QLinearAveragePool adds OutputZeroPoint before
    it rounds (a half goes to the even sum, not the even quotient): within the rule's 1."""
    g = c.g
    w = _window(c)
    x_type, output = c.dtype("InputTensor"), c.dtype("OutputTensor")
    include = c.flag("IncludePadding")
    quantization = (
        "InputScaleTensor",
        "InputZeroPointTensor",
        "OutputScaleTensor",
        "OutputZeroPointTensor",
    )
    per_tensor = all(_per_tensor(c, field) for field in quantization)
    with np.errstate(all="ignore"):  # onnxruntime divides the scales in FLOAT32 first
        ratio = c.array("InputScaleTensor").reshape(-1) / c.array("OutputScaleTensor").reshape(-1)
    contrib = (
        x_type == output
        and per_tensor
        and bool(np.isfinite(ratio).all())
        and all(d == 1 for d in w["dilations"])
        and (include or _own_padding(w))
    )
    if contrib:
        x_zero = _scalar_feed(c, "InputZeroPointTensor", x_type)
        x = c.feed("InputTensor")
        if include:
            pads = g.int64([0, 0, *w["start"], 0, 0, *w["end"]])
            x = g.op("Pad", x, pads, x_zero)
        result = g.op(
            "QLinearAveragePool",
            x,
            _scalar_feed(c, "InputScaleTensor", np.float32),
            x_zero,
            _scalar_feed(c, "OutputScaleTensor", np.float32),
            _scalar_feed(c, "OutputZeroPointTensor", output),
            count_include_pad=0,
            domain="com.microsoft",
            **_attributes(w, include, dilated=False),
        )
        return {"OutputTensor": result}
    real = g.op(
        "DequantizeLinear",
        c.feed("InputTensor"),
        _channel_feed(c, "InputScaleTensor", np.float32),
        _channel_feed(c, "InputZeroPointTensor", x_type),
        dtype=np.float32,
        axis=1,
    )
    result = g.op(
        "QuantizeLinear",
        _average(c, real),
        _channel_feed(c, "OutputScaleTensor", np.float32),
        _channel_feed(c, "OutputZeroPointTensor", output),
        dtype=output,
        axis=1,
    )
    return {"OutputTensor": result}


def _lp_pooling(c: Call) -> dict[str, str]:
    """LpPool on the input padded with zeros (they add nothing to the sum)."""
    g = c.g
    w = _window(c)
    x = _padded(c, g.cast(c.feed("InputTensor"), np.float32), w, 0.0)
    return {"OutputTensor": g.op("LpPool", x, p=int(c.desc["P"]), **_attributes(w, True))}


_MAX_POOL_TYPES = frozenset({"float32", "float16", "float64", "int8", "uint8"})


def _max_input(c: Call) -> tuple[str, Any]:
    """InputTensor as MaxPool takes it (16- and 32-bit integers carried exactly in FLOAT64)
    and the type's lowest value, the padding."""
    g = c.g
    dtype = c.dtype("InputTensor")
    x = c.feed("InputTensor")
    if dtype.name not in _MAX_POOL_TYPES:
        if dtype.itemsize == 8:
            raise Unsupported(f"onnxruntime's MaxPool has no {dtype.name} kernel")
        x = g.cast(x, np.float64)
    return x, -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_and_index(c: Call, x: str, lowest: Any, w: dict[str, list[int]]) -> tuple[str, str]:
    """Each window's maximum and the row-major input index of its first element holding it
    (-1 for a window wholly in the padding). MaxPool's indices count the padded tensor: mapped
    back through a table (-1 in the padding). A window whose maximum is the lowest value may
    have met the padding first; its first input element holding that value is found by a
    second MaxPool, over 1.0 where the input holds it (the padding 0.0)."""
    g = c.g
    padded = _padded(c, x, w, lowest)
    value, first = g.ops("MaxPool", padded, dtypes=[g.dtype(x), np.int64], **_attributes(w, True))
    sizes = c.sizes("InputTensor")
    table = np.pad(
        np.arange(math.prod(sizes), dtype=np.int64).reshape(sizes),
        [(0, 0), (0, 0), *zip(w["start"], w["end"], strict=True)],
        constant_values=-1,
    )
    flat = g.feed(table.reshape(-1))
    index = g.op("Gather", flat, first)
    marked = g.cast(g.compare("Equal", x, g.feed(np.array(lowest, g.dtype(x)))), np.float32)
    _, tied = g.ops(
        "MaxPool", _padded(c, marked, w, 0.0), dtypes=[np.float32, np.int64], **_attributes(w, True)
    )
    in_padding = g.compare("Less", index, g.feed(np.array(0, np.int64)))
    return value, g.where(in_padding, g.op("Gather", flat, tied), index)


def _max_pooling(c: Call) -> dict[str, str]:
    g = c.g
    w = _window(c)
    x, lowest = _max_input(c)
    if c.desc.get("OutputIndicesTensor") is None:
        padded = _padded(c, x, w, lowest)
        return {"OutputTensor": g.op("MaxPool", padded, **_attributes(w, True))}
    value, index = _max_and_index(c, x, lowest, w)
    return {"OutputTensor": value, "OutputIndicesTensor": index}


def _max_pooling_grad(c: Call) -> dict[str, str]:
    """MAX_POOLING2's indices (as above), then ScatterElements with reduction add of the
    gradients (FLOAT32) into the flattened output; a window wholly in the padding (index -1)
    adds 0 at element 0."""
    g = c.g
    w = _window(c)
    x, lowest = _max_input(c)
    _, index = _max_and_index(c, x, lowest, w)
    gradient = g.cast(c.feed("InputGradientTensor"), np.float32)
    nowhere = g.compare("Less", index, g.feed(np.array(0, np.int64)))
    gradient = g.where(nowhere, g.feed(np.zeros((), np.float32)), gradient)
    index = g.where(nowhere, g.feed(np.zeros((), np.int64)), index)
    zeros = g.feed(np.zeros(math.prod(c.sizes("InputTensor")), np.float32))
    flat = g.op(
        "ScatterElements",
        zeros,
        g.reshape(index, [-1]),
        g.reshape(gradient, [-1]),
        axis=0,
        reduction="add",
    )
    return {"OutputGradientTensor": flat}


def _average_pooling_grad(c: Call) -> dict[str, str]:
    """Each window's gradient divided by its divisor (prod(WindowSize), or its count of input
    elements), spread back over the window by a depthwise ConvTranspose of ones, in FLOAT32:
    its pads crop the padding, its output_padding adds the rows the forward windows never
    reached ((size + pads - window) mod stride, below the stride as onnxruntime requires)."""
    g = c.g
    w = _window(c)
    sizes = c.sizes("OutputGradientTensor")
    gradient = g.cast(c.feed("InputGradientTensor"), np.float32)
    divisor = (
        math.prod(w["kernel_shape"])
        if c.flag("IncludePadding")
        else _inside_counts(c, w, sizes, c.sizes("InputGradientTensor"))
    )
    share = g.op("Div", gradient, g.feed(np.asarray(divisor, np.float32)))
    channels = sizes[1]
    ones = g.feed(np.ones([channels, 1, *w["kernel_shape"]], np.float32))
    extra = [
        (n + b + e - k) % s
        for n, b, e, k, s in zip(
            sizes[2:], w["start"], w["end"], w["kernel_shape"], w["strides"], strict=True
        )
    ]
    result = g.op(
        "ConvTranspose",
        share,
        ones,
        group=channels,
        kernel_shape=w["kernel_shape"],
        strides=w["strides"],
        pads=w["start"] + w["end"],
        output_padding=extra,
    )
    return {"OutputGradientTensor": result}


def _max_unpooling(c: Call) -> dict[str, str]:
    """MaxUnpool (FLOAT32 and FLOAT16, the types onnxruntime has it for) where the output's
    batch and channel sizes are the input's and its spatial ones no smaller (onnxruntime
    refuses an output_shape below the shape it infers), as a max pooling's input is; elsewhere
    ScatterElements along the flattened output, the data carried as bits (exact in every type;
    among colliding indices onnxruntime's last write stays, which R2 allows)."""
    g = c.g
    sizes = c.sizes("OutputTensor")
    indices = g.cast(c.feed("IndicesTensor"), np.int64)
    dtype = c.dtype("InputTensor")
    inputs = c.sizes("InputTensor")
    shaped = sizes[:2] == inputs[:2] and all(o >= i for o, i in zip(sizes, inputs, strict=True))
    if dtype.name in ("float32", "float16") and shaped:
        window = [1] * (len(sizes) - 2)
        result = g.op(
            "MaxUnpool", c.feed("InputTensor"), indices, g.int64(sizes), kernel_shape=window
        )
        return {"OutputTensor": result}
    array = c.array("InputTensor")
    values = g.feed(array.view(bit_type(dtype)) if dtype.kind == "f" else array)
    zeros = g.feed(np.zeros(math.prod(sizes), g.dtype(values)))
    flat = g.op("ScatterElements", zeros, g.reshape(indices, [-1]), g.reshape(values, [-1]), axis=0)
    return {"OutputTensor": flat}


OPERATORS = {
    "AVERAGE_POOLING": _average_pooling,
    "AVERAGE_POOLING1": _average_pooling,
    "AVERAGE_POOLING_GRAD": _average_pooling_grad,
    "LP_POOLING": _lp_pooling,
    "LP_POOLING1": _lp_pooling,
    "MAX_POOLING": _max_pooling,
    "MAX_POOLING1": _max_pooling,
    "MAX_POOLING2": _max_pooling,
    "MAX_POOLING_GRAD": _max_pooling_grad,
    "MAX_UNPOOLING": _max_unpooling,
    "QUANTIZED_LINEAR_AVERAGE_POOLING": _quantized_linear_average_pooling,
}


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    return run_operator(kind, OPERATORS[kind], desc, inputs)
