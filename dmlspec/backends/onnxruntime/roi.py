"""The ROI family for the onnxruntime backend: ROI_ALIGN and ROI_ALIGN1 as ONNX RoiAlign,
ROI_POOLING as MaxRoiPool, each where onnxruntime computes what DirectML's page does.

RoiAlign (opset 16+) samples as ROI_ALIGN1 does with InputPixelOffset 0.5 and
OutputPixelOffset -0.5 (coordinate_transformation_mode half_pixel) or InputPixelOffset 0
(output_half_pixel, which also widens regions narrower than 1: refused there); the region's
corners are scaled here (FLOAT32, SpatialScaleX and SpatialScaleY apart, as the page does) and
passed with spatial_scale 1. Divergences, each raised as Unsupported: RoiAlign has no
nearest-neighbour mode; its MAX takes the largest weighted corner, not the largest sample; its
sample count is sampling_ratio (MinimumSamplesPerOutput = MaximumSamplesPerOutput) or
ceil(size / output) unclamped (used where every region's count lies within the two); it
clamps positions in [-1, 0] to the edge and reads 0 beyond, where DirectML reads
OutOfBoundsInputValue for any element outside: only regions whose samples all lie within
[0, size - 1] on both axes are run.

MaxRoiPool computes ROI_POOLING's bins in FLOAT32 (floor(index * RegionSize / Pooled) by a
float quotient; the page's integer divisions agree while the quotient rounds exactly), rounds
the corners half away from zero and writes 0 in an empty bin; FLOAT32 only (FLOAT16 widened:
the maximum is exact). An ROI whose rows are undefined (R1, R2) is replaced by a box of batch
0, a negative SpatialScale (R4: all undefined) by 0, so that the rest of the case still runs;
the corners are scaled here (MaxRoiPool refuses a scale of 0) and passed with scale 1.

ROI_ALIGN_GRAD is declined: ONNX has no gradient of RoiAlign (onnxruntime's inference build
has no training operators).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import Unsupported
from .node import run_node

__all__ = ["OPERATORS", "run"]

OPERATORS = frozenset({"ROI_ALIGN", "ROI_ALIGN1", "ROI_ALIGN_GRAD", "ROI_POOLING"})
f32 = np.float32


def _member(value: Any, prefix: str) -> str:
    return str(value).removeprefix(prefix)


def _samples(size: np.ndarray, output: int, minimum: int, maximum: int) -> tuple[int, np.ndarray]:
    """RoiAlign's sampling_ratio for DirectML's clamp(ceil(size / output), Minimum, Maximum),
    and each region's count; Unsupported where RoiAlign cannot count the same."""
    counts = np.clip(np.ceil(size / f32(output)), minimum, maximum).astype(np.int64)
    if minimum == maximum:
        return minimum, counts
    if bool((np.ceil(size / f32(output)) == counts).all()) and bool((counts >= 1).all()):
        return 0, counts
    raise Unsupported("RoiAlign's adaptive sample count is not clamped by Min/MaxSamplesPerOutput")


def _inside(
    first: np.ndarray,
    size: np.ndarray,
    counts: np.ndarray,
    output: int,
    extent: int,
    input_offset: float,
) -> bool:
    """Whether every sample position of every region lies within [0, extent - 1]."""
    for start, length, n in zip(first, size, counts, strict=True):
        step = f32(length / f32(f32(output) * f32(n)))
        positions = (np.arange(output * n, dtype=f32) + f32(0.5)) * step + start - f32(input_offset)
        if not ((positions >= 0) & (positions <= extent - 1)).all():
            return False
    return True


def _roi_align(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> np.ndarray:
    from ...reference.tensors import numpy_dtype, tensor_desc

    output = tensor_desc(desc["OutputTensor"])
    count, channels, out_h, out_w = (int(s) for s in output["Sizes"])
    dtype = numpy_dtype(str(output["DataType"]))
    if _member(desc["InterpolationMode"], "DML_INTERPOLATION_MODE_") != "LINEAR":
        raise Unsupported("RoiAlign has no nearest-neighbour mode")
    if _member(desc["ReductionFunction"], "DML_REDUCE_FUNCTION_") != "AVERAGE":
        raise Unsupported("RoiAlign's max takes the largest weighted corner, not sample")
    input_offset, output_offset = 0.5, -0.5
    if kind == "ROI_ALIGN1":
        if desc.get("AlignRegionsToCorners") in (True, "TRUE", 1):
            raise Unsupported("AlignRegionsToCorners is undefined (ROI_ALIGN1.R4)")
        input_offset = float(f32(desc["InputPixelOffset"]))
        output_offset = float(f32(desc["OutputPixelOffset"]))
    if output_offset != -0.5 or input_offset not in (0.0, 0.5):
        raise Unsupported("RoiAlign's pixel offsets are (0.5 or 0, -0.5) only")
    data = np.asarray(inputs["InputTensor"])
    boxes = np.asarray(inputs["ROITensor"]).reshape(count, 4).astype(f32)
    scale = np.array(
        [desc["SpatialScaleX"], desc["SpatialScaleY"]] * 2, dtype=f32
    )  # x1, y1, x2, y2
    scaled = boxes * scale
    if not np.isfinite(scaled).all():
        raise Unsupported("non-finite regions are undefined (R2)")
    limits = (int(desc["MinimumSamplesPerOutput"]), int(desc["MaximumSamplesPerOutput"]))
    width, height = scaled[:, 2] - scaled[:, 0], scaled[:, 3] - scaled[:, 1]
    if input_offset == 0.0 and bool(((width < 1) | (height < 1)).any()):
        raise Unsupported("RoiAlign output_half_pixel widens regions narrower than 1")
    ratio_x, counts_x = _samples(width, out_w, *limits)
    ratio_y, counts_y = _samples(height, out_h, *limits)
    if ratio_x != ratio_y:
        raise Unsupported("RoiAlign has one sampling_ratio for both axes")
    in_h, in_w = data.shape[-2:]
    if not (
        _inside(scaled[:, 0], width, counts_x, out_w, in_w, input_offset)
        and _inside(scaled[:, 1], height, counts_y, out_h, in_h, input_offset)
    ):
        raise Unsupported("RoiAlign clamps or zeroes samples outside the input")
    batches = np.asarray(inputs["BatchIndicesTensor"]).reshape(count)
    if not bool((batches < data.shape[0]).all()):
        raise Unsupported("a batch index out of range is undefined (R1)")
    result = run_node(
        "RoiAlign",
        {
            "X": data.astype(f32),
            "rois": scaled,
            "batch_indices": batches.astype(np.int64),
        },
        f32,
        4,
        coordinate_transformation_mode="half_pixel" if input_offset == 0.5 else "output_half_pixel",
        mode="avg",
        output_height=out_h,
        output_width=out_w,
        sampling_ratio=ratio_x,
        spatial_scale=1.0,
    )
    return result.reshape(count, channels, out_h, out_w).astype(dtype)


def _roi_pooling(desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> np.ndarray:
    from ...reference.tensors import numpy_dtype, tensor_desc

    output = tensor_desc(desc["OutputTensor"])
    count = int(output["Sizes"][0])
    dtype = numpy_dtype(str(output["DataType"]))
    pooled = desc["PooledSize"]
    boxes = np.asarray(inputs["ROITensor"]).reshape(count, 5).astype(f32)
    batches = np.asarray(inputs["InputTensor"]).shape[0]
    with np.errstate(invalid="ignore"):
        good = (
            np.isfinite(boxes).all(axis=1)
            & (np.floor(boxes[:, 0]) == boxes[:, 0])
            & (boxes[:, 0] >= 0)
            & (boxes[:, 0] < batches)
            & (boxes[:, 1] <= boxes[:, 3])
            & (boxes[:, 2] <= boxes[:, 4])
        )
    # An ROI breaking R1 or R2 leaves its rows undefined: a box of batch 0 stands in for it.
    boxes = np.where(good[:, None], boxes, f32(0))
    # The corners scaled here in FLOAT32, as MaxRoiPool would (it refuses a scale of 0)
    scale = f32(max(float(f32(desc["SpatialScale"])), 0.0))  # negative: undefined (R4)
    boxes[:, 1:] = boxes[:, 1:] * scale
    result = run_node(
        "MaxRoiPool",
        {"X": np.asarray(inputs["InputTensor"]).astype(f32), "rois": boxes},
        f32,
        4,
        pooled_shape=(int(pooled["Height"]), int(pooled["Width"])),
        spatial_scale=1.0,
    )
    return result.astype(dtype)


def run(kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The operator `kind` (no DML_OPERATOR_ prefix) on packed inputs: outputs by field."""
    if kind == "ROI_POOLING":
        return {"OutputTensor": _roi_pooling(desc, inputs)}
    if kind == "ROI_ALIGN_GRAD":
        raise Unsupported(
            "ONNX has no gradient of RoiAlign (onnxruntime's inference build has no training "
            "operators): no graph for ROI_ALIGN_GRAD"
        )
    return {"OutputTensor": _roi_align(kind, desc, inputs)}
