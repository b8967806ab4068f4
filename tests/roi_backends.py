"""Backends with the ROI family's realistic bugs, for the suites' meta tests: each runs the
NumPy reference on a desc (or inputs) the bug changed."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.roi import _Axis
from dmlspec.reference.tensors import tensor_desc


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


class CornerPixelRoiAlign(NumpyBackend):
    """ROI_ALIGN that forgets the half-pixel offsets: pixels at their top-left corners
    (ROI_ALIGN1 with InputPixelOffset 0 and OutputPixelOffset 0), and ROI_ALIGN1 that ignores
    its InputPixelOffset."""

    name = "corner-pixel-roi-align"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(dict(operator))
        desc = changed["desc"]
        if _kind(operator) == "ROI_ALIGN":
            changed["type"] = "DML_OPERATOR_ROI_ALIGN1"
            desc.update(InputPixelOffset=0.0, OutputPixelOffset=0.0, AlignRegionsToCorners=False)
        elif _kind(operator) == "ROI_ALIGN1":
            desc["InputPixelOffset"] = 0.0
        return reference.run(changed, inputs)


class UnscaledRois(NumpyBackend):
    """The ROI family reading the ROIs' coordinates without their spatial scale (SpatialScale,
    SpatialScaleX and SpatialScaleY taken as 1)."""

    name = "unscaled-rois"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(dict(operator))
        for field in ("SpatialScale", "SpatialScaleX", "SpatialScaleY"):
            if field in changed["desc"]:
                changed["desc"][field] = 1.0
        return reference.run(changed, inputs)


class UndividedRoiAlignGrad(NumpyBackend):
    """ROI_ALIGN_GRAD with AVERAGE that forgets to divide each output element's gradient by
    its sample count: every sample gets the whole of it."""

    name = "undivided-roi-align-grad"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        desc = operator["desc"]
        strided = any("Strides" in tensor_desc(desc[name]) for name in inputs)
        if _kind(operator) != "ROI_ALIGN_GRAD" or "AVERAGE" not in desc["ReductionFunction"]:
            return reference.run(operator, inputs)
        if strided:  # the bug shows on packed tensors
            return reference.run(operator, inputs)

        gradient = np.asarray(inputs["InputGradientTensor"]).copy()
        count, _, height, width = gradient.shape
        limits = (desc["MinimumSamplesPerOutput"], desc["MaximumSamplesPerOutput"])
        offsets = (desc["InputPixelOffset"], desc["OutputPixelOffset"])
        for r, box in enumerate(np.asarray(inputs["ROITensor"]).reshape(count, 4)):
            ax = _Axis(box[0], box[2], desc["SpatialScaleX"], width, limits, offsets)
            ay = _Axis(box[1], box[3], desc["SpatialScaleY"], height, limits, offsets)
            gradient[r] *= ax.samples * ay.samples
        return reference.run(operator, {**inputs, "InputGradientTensor": gradient})
