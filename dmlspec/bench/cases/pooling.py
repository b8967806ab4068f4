"""The pooling family's benchmark cases, one size each (about 64 MiB touched):

- MAX_POOLING, a 3x3 window at stride 2 padded by 1 (ResNet's stem pool), over
  {1, 64, 512, 512} FLOAT32 (64 MiB in, 16 MiB out);
- AVERAGE_POOLING, a 3x3 window at stride 1 padded by 1 with the padding counted
  (IncludePadding), over {1, 32, 512, 512} FLOAT32 (32 MiB in, 32 MiB out).

These move more bytes than they compute on, so besides plain XLA (the convolution family's
targets: dmlspec adds nothing over the obvious jax.jit of `lax.reduce_window`) they have the
memory-bound target, `out=` at least 50% of the copy bandwidth (resampling.py's resize too).
FLOPs counted: one per window element of each output (a comparison or an addition). Expected
outputs: the reference (max pooling compared by its spec's rule: exact), or the FLOAT64
reference rounded with the spec's dot-product bound (average). Peers: onnxruntime's MaxPool and
AveragePool, torch's max_pool2d and avg_pool2d when installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from ... import ops, reference
from ..families import (
    Scale,
    dmlspec_variants,
    dot_product_expected,
    normal,
    onnxruntime_variants,
    operator_json,
    plain_xla_on_numpy,
    spec_tolerance,
    torch_variants,
    with_flops,
)
from ..variants import BenchCase

__all__ = ["average_pool_case", "max_pool_case"]

POOLING = "pooling"


def _window_fields(stride: int) -> dict[str, Any]:
    return {
        "DimensionCount": 2,
        "Strides": [stride, stride],
        "WindowSize": [3, 3],
        "StartPadding": [1, 1],
        "EndPadding": [1, 1],
    }


def _padding() -> list[tuple[int, int]]:
    return [(0, 0), (0, 0), (1, 1), (1, 1)]


def max_pool_case(name: str, n: Scale, channels: int, side: int) -> BenchCase:
    x = normal(90, (1, n(channels), n(side), n(side)))
    fields = _window_fields(2)
    output_side = (x.shape[2] + 2 - 3) // 2 + 1
    output = np.zeros((1, x.shape[1], output_side, output_side), np.float32)
    operator = operator_json("MAX_POOLING", {"InputTensor": x, "OutputTensor": output}, **fields)
    expected = np.asarray(reference.run(operator, {"InputTensor": x})["OutputTensor"])
    tolerance = spec_tolerance(operator, {"InputTensor": x}, expected)
    moved = x.nbytes + expected.nbytes
    flops = expected.size * 9

    def plain(v: Any) -> Any:
        return lax.reduce_window(v, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), _padding())

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        pool = torch.nn.functional.max_pool2d
        return (lambda: pool(t, 3, stride=2, padding=1)), None

    baseline = "jax.jit(lax.reduce_window max)"
    node = ("MaxPool", ["x"], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4})
    variants = [
        *dmlspec_variants(ops.max_pooling, [x], fields, expected, moved, (baseline, plain)),
        plain_xla_on_numpy(baseline, plain, [x], moved),
        *onnxruntime_variants(node, {"x": x}, expected, moved),
        *torch_variants("max_pool2d", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "MAX_POOLING",
        "large",
        "float32",
        f"3x3 max pool, stride 2, {tuple(x.shape)} -> {tuple(expected.shape)} float32",
        with_flops(variants, flops),
        expected,
        POOLING,
        tolerance,
    )


def average_pool_case(name: str, n: Scale, channels: int, side: int) -> BenchCase:
    x = normal(91, (1, n(channels), n(side), n(side)))
    fields = {**_window_fields(1), "IncludePadding": True}
    output = np.zeros_like(x)
    operator = operator_json(
        "AVERAGE_POOLING", {"InputTensor": x, "OutputTensor": output}, **fields
    )
    expected, tolerance = dot_product_expected(operator, {"InputTensor": x})
    moved = x.nbytes + expected.nbytes
    flops = expected.size * 9

    def plain(v: Any) -> Any:
        total = lax.reduce_window(v, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), _padding())
        return total / 9.0

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        pool = torch.nn.functional.avg_pool2d
        return (lambda: pool(t, 3, stride=1, padding=1, count_include_pad=True)), None

    baseline = "jax.jit(lax.reduce_window add / 9)"
    node = (
        "AveragePool",
        ["x"],
        {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1] * 4, "count_include_pad": 1},
    )
    variants = [
        *dmlspec_variants(ops.average_pooling, [x], fields, expected, moved, (baseline, plain)),
        plain_xla_on_numpy(baseline, plain, [x], moved),
        *onnxruntime_variants(node, {"x": x}, expected, moved),
        *torch_variants("avg_pool2d", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "AVERAGE_POOLING",
        "large",
        "float32",
        f"3x3 average pool, stride 1, padding counted, {tuple(x.shape)} float32",
        with_flops(variants, flops),
        expected,
        POOLING,
        tolerance,
    )
