"""The normalization family's benchmark cases, one size each (about 64 MiB touched):

- BATCH_NORMALIZATION with per-channel statistics over {8, 64, 128, 128} FLOAT32 (ResNet's
  inference form; 32 MiB in, 32 MiB out);
- layer normalization, MEAN_VARIANCE_NORMALIZATION1 over the last axis of {4096, 2048}
  FLOAT32 with a scale and a bias of {1, 2048} (a transformer's; 32 MiB in, 32 MiB out).

Both move more bytes than they compute on, so besides plain XLA (the obvious jax.numpy formula
under one jax.jit: dmlspec should add nothing over it) they have the memory-bound target,
`out=` at least 50% of the copy bandwidth, as the pooling family's. FLOPs counted per element:
batch normalization's subtraction, scaling and bias (the per-channel factor once), 4; layer
normalization's two sums, the centring, the square, the division, the scale and the bias, 8.
Expected outputs: the FLOAT64 reference rounded, with the spec's dot-product bound (the
normalization bound of dmlspec.normalization). Peers: onnxruntime's BatchNormalization and
LayerNormalization, torch's batch_norm and layer_norm when installed.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ... import ops
from ..families import (
    Scale,
    dmlspec_variants,
    dot_product_expected,
    normal,
    onnxruntime_variants,
    operator_json,
    plain_xla_on_numpy,
    torch_variants,
    with_flops,
)
from ..variants import BenchCase, device

__all__ = ["batch_normalization_case", "layer_normalization_case"]

NORMALIZATION = "normalization"
EPSILON = 1e-5


def _per_channel(seed: int, channels: int, low: float, high: float) -> np.ndarray:
    values = np.random.default_rng(seed).uniform(low, high, channels).astype(np.float32)
    return values.reshape(1, channels, 1, 1)


def batch_normalization_case(
    name: str, n: Scale, batch: int, channels: int, side: int
) -> BenchCase:
    x = normal(95, (n(batch), channels, n(side), n(side)))
    mean, scale, bias = (_per_channel(96 + i, channels, -1.0, 1.0) for i in range(3))
    variance = _per_channel(99, channels, 0.5, 2.0)
    inputs = [x, mean, variance, scale, bias]
    fields = ("InputTensor", "MeanTensor", "VarianceTensor", "ScaleTensor", "BiasTensor")
    tensors = dict(zip(fields, inputs, strict=True))
    attributes = {"Spatial": True, "Epsilon": EPSILON}
    operator = operator_json("BATCH_NORMALIZATION", {**tensors, "OutputTensor": x}, **attributes)
    expected, tolerance = dot_product_expected(operator, tensors)
    moved = x.nbytes + expected.nbytes

    def plain(v: Any, m: Any, var: Any, s: Any, b: Any) -> Any:
        return (v - m) * (s / jnp.sqrt(var + EPSILON)) + b

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        vectors = [torch.from_numpy(a.reshape(-1)) for a in (mean, variance, scale, bias)]
        norm = torch.nn.functional.batch_norm
        return (lambda: norm(t, *vectors[:2], *vectors[2:], False, 0.0, EPSILON)), None

    baseline = "jax.jit((x - mean) * (scale / sqrt(var + eps)) + bias)"
    vectors = {
        k: a.reshape(-1) for k, a in (("s", scale), ("b", bias), ("m", mean), ("v", variance))
    }
    node = ("BatchNormalization", ["x", "s", "b", "m", "v"], {"epsilon": EPSILON})
    variants = [
        *dmlspec_variants(
            ops.batch_normalization, inputs, attributes, expected, moved, (baseline, plain)
        ),
        plain_xla_on_numpy(baseline, plain, inputs, moved),
        *onnxruntime_variants(node, {"x": x}, expected, moved, constants=vectors),
        *torch_variants("batch_norm", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "BATCH_NORMALIZATION",
        "large",
        "float32",
        f"per-channel batch normalization, {tuple(x.shape)} float32",
        with_flops(variants, 4 * x.size),
        expected,
        NORMALIZATION,
        tolerance,
    )


def layer_normalization_case(name: str, n: Scale, rows: int, hidden: int) -> BenchCase:
    x = normal(100, (n(rows), n(hidden)))
    generator = np.random.default_rng(101)
    scale = generator.uniform(0.5, 1.5, (1, x.shape[1])).astype(np.float32)
    bias = generator.uniform(-1.0, 1.0, (1, x.shape[1])).astype(np.float32)
    tensors = {"InputTensor": x, "ScaleTensor": scale, "BiasTensor": bias}
    attributes = {"AxisCount": 1, "Axes": [1], "NormalizeVariance": True, "Epsilon": EPSILON}
    operator = operator_json(
        "MEAN_VARIANCE_NORMALIZATION1", {**tensors, "OutputTensor": x}, **attributes
    )
    expected, tolerance = dot_product_expected(operator, tensors)
    moved = x.nbytes + expected.nbytes
    placed_scale, placed_bias = device(scale), device(bias)  # on the device once, as x is

    def plain(v: Any) -> Any:
        centred = v - v.mean(axis=-1, keepdims=True)
        variance = (centred * centred).mean(axis=-1, keepdims=True)
        return centred / jnp.sqrt(variance + EPSILON) * placed_scale + placed_bias

    def torch_calls(torch: Any) -> Any:
        t, s, b = torch.from_numpy(x), torch.from_numpy(scale[0]), torch.from_numpy(bias[0])
        norm = torch.nn.functional.layer_norm
        return (lambda: norm(t, (x.shape[1],), s, b, EPSILON)), None

    baseline = "jax.jit(layer norm: mean, centred variance, scale, bias)"
    node = ("LayerNormalization", ["x", "s", "b"], {"axis": -1, "epsilon": EPSILON})
    fields = {**attributes, "ScaleTensor": placed_scale, "BiasTensor": placed_bias}
    variants = [
        *dmlspec_variants(
            ops.mean_variance_normalization1, [x], fields, expected, moved, (baseline, plain)
        ),
        plain_xla_on_numpy(baseline, plain, [x], moved),
        *onnxruntime_variants(
            node,
            {"x": x},
            expected,
            moved,
            constants={"s": scale.reshape(-1), "b": bias.reshape(-1)},
        ),
        *torch_variants("layer_norm", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "MEAN_VARIANCE_NORMALIZATION1",
        "large",
        "float32",
        f"layer normalization over the last axis, {tuple(x.shape)} float32",
        with_flops(variants, 8 * x.size),
        expected,
        NORMALIZATION,
        tolerance,
    )
