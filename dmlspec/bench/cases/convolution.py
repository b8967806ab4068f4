"""The convolution family's benchmark cases: compute-bound, so read in GFLOP/s against the
machine's matrix-multiply peak measured in the same run (../peak.py), besides the time.

- CONVOLUTION at ResNet-50's sizes (batch 1, FLOAT32, stride 1, "same" padding): a 3x3 of 64
  channels at 56x56 (stage 1), a 1x1 of 256 channels to 128 at 28x28 (stage 2's reduction),
  and a depthwise 3x3 (GroupCount = 256 channels) at 14x14, as MobileNet-style blocks have;
- GEMM of 1024 x 1024 x 1024 in FLOAT32 and in FLOAT16 (no C, Alpha 1).

Each case has one size (no small form: a small convolution's floor is the trivial call's,
which the other families measure). FLOPs: two per multiply-add of the products (peak.py).
Byte accounting, as the other families count it: the inputs (the filter too) read once and
the output written once.

Expected outputs are the FLOAT64 reference (`reference.run_exact`) rounded to the output type;
a variant's output passes within the spec's dot-product bound of it (families.
dot_product_expected), since every library sums the products in its own order.

Beside dmlspec's variants and the kernel's program jitted whole (families.py), plain XLA is
the obvious jax.jit expression, `lax.conv_general_dilated` or `jnp.matmul`, in the cases' own
data types (FLOAT16 in, FLOAT16 out), at Precision.HIGHEST (what the spec's accuracy needs:
on an accelerator the default precision may run FLOAT32 in TF32 passes; on the CPU it changes
nothing, measured); and the same plain XLA given the NumPy arrays, the counterpart of dmlspec's
`numpy in`. The targets (targets.py) compare with those two; the peers are information:
onnxruntime (a one-node Conv whose filter is stored in the model, as an exported model holds
its weights; MatMul on both inputs), NumPy's BLAS for the FLOAT32 GEMM (NumPy has no
convolution, and its FLOAT16 matmul is not BLAS but a loop, seconds per call), and torch when
installed.

- MULTIHEAD_ATTENTION of BERT-base's shape (batch 1, 512 tokens, 8 heads of 64; separate
  query, key and value, no mask), FLOAT32, counting 4 * batch * heads * query_length *
  key_length * head_size FLOPs (the two products; the softmax is per score, not per product).
  Plain XLA is the two einsums around jax.nn.softmax; onnxruntime's peer its contrib
  MultiHeadAttention (com.microsoft), torch's scaled_dot_product_attention when installed.
  `ops.multihead_attention` returns three outputs and has no `out=`: no `out=` variant.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ... import ops
from ..families import (
    Scale,
    dmlspec_variants,
    dot_product_expected,
    numpy_variants,
    onnxruntime_variants,
    operator_json,
    plain_xla_on_numpy,
    torch_variants,
    with_flops,
)
from ..peak import convolution_flops, gemm_flops
from ..timing import Variant
from ..variants import BenchCase

__all__ = ["attention_case", "convolution_case", "gemm_case"]

FAMILY = "convolution"
HIGHEST = lax.Precision.HIGHEST


def _random(seed: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def convolution_case(
    name: str, n: Scale, channels: int, outputs: int, side: int, window: int, groups: int
) -> BenchCase:
    """A forward 2-D cross-correlation (DirectML's CROSS_CORRELATION is ONNX's and torch's
    Conv), batch 1, stride 1, padded to keep the spatial size. `groups` == `channels` ==
    `outputs` is depthwise; `n` scales channels and sides (tests run tiny cases)."""
    depthwise = groups == channels
    channels, outputs, side = n(channels), n(outputs), n(side)
    groups = channels if depthwise else groups
    pad = window // 2
    x = _random(60 + window, (1, channels, side, side), "float32")
    w = _random(61 + window, (outputs, channels // groups, window, window), "float32")
    fields: dict[str, Any] = {
        "Mode": "DML_CONVOLUTION_MODE_CROSS_CORRELATION",
        "Direction": "DML_CONVOLUTION_DIRECTION_FORWARD",
        "DimensionCount": 2,
        "Strides": [1, 1],
        "Dilations": [1, 1],
        "StartPadding": [pad, pad],
        "EndPadding": [pad, pad],
        "OutputPadding": [0, 0],
        "GroupCount": groups,
    }
    output = np.zeros((1, outputs, side, side), np.float32)
    operator = operator_json(
        "CONVOLUTION", {"InputTensor": x, "FilterTensor": w, "OutputTensor": output}, **fields
    )
    expected, tolerance = dot_product_expected(operator, {"InputTensor": x, "FilterTensor": w})
    moved = x.nbytes + w.nbytes + expected.nbytes
    flops = convolution_flops(1, outputs, (side, side), channels // groups, (window, window))

    def plain(v: Any, f: Any) -> Any:
        padding = [(pad, pad), (pad, pad)]
        return lax.conv_general_dilated(
            v, f, (1, 1), padding, feature_group_count=groups, precision=HIGHEST
        )

    def torch_calls(torch: Any) -> Any:
        t, tw = torch.from_numpy(x), torch.from_numpy(w)
        conv2d = torch.nn.functional.conv2d
        return (lambda: conv2d(t, tw, padding=pad, groups=groups)), None

    baseline = "jax.jit(lax.conv_general_dilated)"
    desc = {"DataType": "FLOAT32", "Sizes": list(expected.shape)}
    node = ("Conv", ["x", "w"], {"kernel_shape": [window] * 2, "pads": [pad] * 4, "group": groups})
    variants = [
        *dmlspec_variants(
            ops.convolution,
            [x, w],
            {"OutputTensor": desc, **fields},
            expected,
            moved,
            (baseline, plain),
        ),
        plain_xla_on_numpy(baseline, plain, [x, w], moved),
        *onnxruntime_variants(node, {"x": x}, expected, moved, constants={"w": w}),
        *torch_variants("conv2d", torch_calls, moved),
    ]
    kind = "depthwise " if depthwise else ""
    return BenchCase(
        name,
        "CONVOLUTION",
        "large",
        "float32",
        f"{kind}{window}x{window} convolution, {tuple(x.shape)} -> {tuple(expected.shape)} "
        f"float32, GroupCount {groups}, {flops / 1e6:.1f} MFLOP",
        with_flops(variants, flops),
        expected,
        FAMILY,
        tolerance,
        notes=["onnxruntime's Conv holds its filter in the model (an initializer)"],
    )


def gemm_case(name: str, n: Scale, side: int, dtype: str) -> BenchCase:
    """{side, side} x {side, side} in `dtype` (4-D, as DirectML's GEMM tensors are)."""
    side = n(side)
    a = _random(70, (1, 1, side, side), dtype)
    b = _random(71, (1, 1, side, side), dtype)
    data_type = dtype.upper()
    fields: dict[str, Any] = {
        "TransA": "DML_MATRIX_TRANSFORM_NONE",
        "TransB": "DML_MATRIX_TRANSFORM_NONE",
        "Alpha": 1.0,
        "Beta": 0.0,
    }
    operator = operator_json(
        "GEMM", {"ATensor": a, "BTensor": b, "OutputTensor": np.zeros_like(a)}, **fields
    )
    expected, tolerance = dot_product_expected(operator, {"ATensor": a, "BTensor": b})
    moved = a.nbytes + b.nbytes + expected.nbytes
    flops = gemm_flops(side, side, side)

    def plain(x: Any, y: Any) -> Any:
        return jnp.matmul(x, y, precision=HIGHEST)

    def torch_calls(torch: Any) -> Any:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        out = torch.from_numpy(np.zeros_like(expected))
        return (lambda: torch.matmul(ta, tb)), (lambda: torch.matmul(ta, tb, out=out))

    notes = []
    blas: list[Variant] = []
    if dtype == "float32":
        blas = numpy_variants(
            "np.matmul",
            lambda: np.matmul(a, b),
            lambda o: np.matmul(a, b, out=o),
            np.empty_like(expected),
            moved,
        )
    else:
        notes.append(f"no NumPy peer: NumPy's {dtype} matmul is a loop, not BLAS")
    desc = {"DataType": data_type, "Sizes": list(expected.shape)}
    variants = [
        *dmlspec_variants(
            ops.gemm,
            [a, b],
            {"OutputTensor": desc, **fields},
            expected,
            moved,
            ("jax.jit(jnp.matmul)", plain),
        ),
        plain_xla_on_numpy("jax.jit(jnp.matmul)", plain, [a, b], moved),
        *blas,
        *_onnxruntime_matmul(a, b, expected, moved, notes),
        *torch_variants("matmul", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "GEMM",
        "large",
        dtype,
        f"{side} x {side} x {side} {dtype}, {flops / 1e9:.2f} GFLOP",
        with_flops(variants, flops),
        expected,
        FAMILY,
        tolerance,
        notes=notes,
    )


def _onnxruntime_matmul(
    a: np.ndarray, b: np.ndarray, expected: np.ndarray, moved: int, notes: list[str]
) -> list[Variant]:
    """onnxruntime's MatMul, or none with a note where its CPU provider has no kernel for the
    type (the session refuses to build)."""
    try:
        return onnxruntime_variants(("MatMul", ["a", "b"], {}), {"a": a, "b": b}, expected, moved)
    except Exception as error:  # onnxruntime's own exception types: information, not a failure
        notes.append(f"no onnxruntime peer: {type(error).__name__}: {str(error)[:160]}")
        return []


def attention_case(name: str, n: Scale, sequence: int, heads: int, head_size: int) -> BenchCase:
    """Self-attention of one batch: query, key and value {1, sequence, heads * head_size},
    Scale 1/sqrt(head_size), no mask, bias or past."""
    sequence, head_size = n(sequence), n(head_size)
    hidden = heads * head_size
    q, k, v = (_random(80 + i, (1, sequence, hidden), "float32") for i in range(3))
    scale = 1.0 / float(np.sqrt(head_size))
    fields: dict[str, Any] = {
        "Scale": scale,
        "MaskFilterValue": -10000.0,
        "HeadCount": heads,
        "MaskType": "DML_MULTIHEAD_ATTENTION_MASK_TYPE_NONE",
    }
    tensors = {"QueryTensor": q, "KeyTensor": k, "ValueTensor": v}
    operator = operator_json(
        "MULTIHEAD_ATTENTION", {**tensors, "OutputTensor": np.zeros_like(q)}, **fields
    )
    expected, tolerance = dot_product_expected(operator, tensors)
    moved = q.nbytes + k.nbytes + v.nbytes + expected.nbytes
    flops = 4 * heads * sequence * sequence * head_size

    def multihead_attention(query: Any, key: Any, value: Any, **given: Any) -> Any:
        output, _, _ = ops.multihead_attention(
            QueryTensor=query,
            KeyTensor=key,
            ValueTensor=value,
            OutputPresentKeyTensor=None,
            OutputPresentValueTensor=None,
            **given,
        )
        return output

    def plain(query: Any, key: Any, value: Any) -> Any:
        split = (1, sequence, heads, head_size)
        qh, kh, vh = (t.reshape(split) for t in (query, key, value))
        scores = jnp.einsum("bqhd,bkhd->bhqk", qh, kh, precision=HIGHEST) * scale
        weights = jax.nn.softmax(scores, axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", weights, vh, precision=HIGHEST).reshape(q.shape)

    def torch_calls(torch: Any) -> Any:
        split = (1, sequence, heads, head_size)
        tq, tk, tv = (torch.from_numpy(t).reshape(split).transpose(1, 2) for t in (q, k, v))
        attend = torch.nn.functional.scaled_dot_product_attention
        return (lambda: attend(tq, tk, tv, scale=scale)), None

    baseline = "jax.jit(einsum, softmax, einsum)"
    desc = {"DataType": "FLOAT32", "Sizes": list(expected.shape)}
    node = (
        "MultiHeadAttention",
        ["q", "k", "v"],
        {"domain": "com.microsoft", "num_heads": heads, "scale": scale},
    )
    notes = ["no out= variant: ops.multihead_attention returns three outputs"]
    try:
        peers = onnxruntime_variants(node, {"q": q, "k": k, "v": v}, expected, moved)
    except Exception as error:  # onnxruntime's own exception types: information, not a failure
        peers = []
        notes.append(f"no onnxruntime peer: {type(error).__name__}: {str(error)[:160]}")
    variants = [
        *dmlspec_variants(
            multihead_attention,
            [q, k, v],
            {"OutputTensor": desc, **fields},
            expected,
            moved,
            (baseline, plain),
            takes_out=False,
        ),
        plain_xla_on_numpy(baseline, plain, [q, k, v], moved),
        *peers,
        *torch_variants("scaled_dot_product_attention", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "MULTIHEAD_ATTENTION",
        "large",
        "float32",
        f"attention, {heads} heads of {head_size}, {sequence} tokens, float32, "
        f"{flops / 1e9:.2f} GFLOP",
        with_flops(variants, flops),
        expected,
        FAMILY,
        tolerance,
        notes=notes,
    )
