"""Backends with the ROI family's realistic bugs, for the suites' meta tests: each runs the
NumPy reference on a desc the bug changed."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from dmlspec import reference
from dmlspec.backends import NumpyBackend


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
