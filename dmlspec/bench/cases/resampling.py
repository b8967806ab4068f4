"""The resampling family's benchmark case (about 64 MiB touched): RESAMPLE1, LINEAR, twice the
height and width at half-pixel offsets (InputPixelOffsets 0.5, OutputPixelOffsets -0.5: ONNX's
half_pixel), {1, 16, 512, 512} FLOAT32 to {1, 16, 1024, 1024} (16 MiB in, 64 MiB out).

As the pooling family's cases (pooling.py): targets against plain XLA, the obvious jax.jit of
`jax.image.resize`, and `out=` at least 50% of the copy bandwidth. FLOPs counted: eight per
output (four weights, a multiply and an add each). Expected: the FLOAT64 reference rounded,
with the spec's dot-product bound. Peers: onnxruntime's Resize, torch's interpolate when
installed.
"""

from __future__ import annotations

from typing import Any

import jax
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
from ..variants import BenchCase

__all__ = ["linear_resize_case"]

RESAMPLING = "resampling"


def linear_resize_case(name: str, n: Scale, channels: int, side: int) -> BenchCase:
    x = normal(92, (1, n(channels), n(side), n(side)))
    shape = (1, x.shape[1], 2 * x.shape[2], 2 * x.shape[3])
    fields: dict[str, Any] = {
        "InterpolationMode": "DML_INTERPOLATION_MODE_LINEAR",
        "DimensionCount": 4,
        "Scales": [1.0, 1.0, 2.0, 2.0],
        "InputPixelOffsets": [0.5, 0.5, 0.5, 0.5],
        "OutputPixelOffsets": [-0.5, -0.5, -0.5, -0.5],
    }
    output = np.zeros(shape, np.float32)
    operator = operator_json("RESAMPLE1", {"InputTensor": x, "OutputTensor": output}, **fields)
    expected, tolerance = dot_product_expected(operator, {"InputTensor": x})
    moved = x.nbytes + expected.nbytes
    flops = expected.size * 8

    def plain(v: Any) -> Any:
        return jax.image.resize(v, shape, "linear", antialias=False)

    def torch_calls(torch: Any) -> Any:
        t = torch.from_numpy(x)
        resize = torch.nn.functional.interpolate
        return (lambda: resize(t, scale_factor=2, mode="bilinear", align_corners=False)), None

    baseline = "jax.jit(jax.image.resize linear)"
    desc = {"DataType": "FLOAT32", "Sizes": list(shape)}
    node = (
        "Resize",
        ["x", "roi", "scales"],
        {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
    )
    variants = [
        *dmlspec_variants(
            ops.resample1,
            [x],
            {"OutputTensor": desc, **fields},
            expected,
            moved,
            (baseline, plain),
        ),
        plain_xla_on_numpy(baseline, plain, [x], moved),
        *onnxruntime_variants(
            node,
            {"x": x},
            expected,
            moved,
            constants={
                "roi": np.zeros(0, np.float32),
                "scales": np.array([1, 1, 2, 2], np.float32),
            },
        ),
        *torch_variants("interpolate bilinear", torch_calls, moved),
    ]
    return BenchCase(
        name,
        "RESAMPLE1",
        "large",
        "float32",
        f"bilinear 2x resize, half-pixel, {tuple(x.shape)} -> {shape} float32",
        with_flops(variants, flops),
        expected,
        RESAMPLING,
        tolerance,
        notes=[
            "plain XLA's jax.image.resize computes its weights in FLOAT64 under x64, as every "
            "jitted variant runs (the kernels' 64-bit results stay 64-bit)"
        ],
    )
