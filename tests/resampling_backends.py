"""Backends with the resampling family's realistic bugs, for the suites' meta tests: each runs
the NumPy reference on a desc read the wrong way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlspec import reference
from dmlspec.backends import NumpyBackend


class IgnoredPixelOffsets(NumpyBackend):
    """RESAMPLE1-3 and the gradients that sample pixel centres whatever InputPixelOffsets and
    OutputPixelOffsets say (RESAMPLE's 0.5 and -0.5)."""

    name = "ignored-pixel-offsets"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        desc = dict(operator["desc"])
        if "InputPixelOffsets" in desc:
            count = len(desc["InputPixelOffsets"])
            desc["InputPixelOffsets"], desc["OutputPixelOffsets"] = [0.5] * count, [-0.5] * count
        return reference.run({**operator, "desc": desc}, inputs)


class RoundedTheWrongWay(NumpyBackend):
    """RESAMPLE2, RESAMPLE3 and RESAMPLE_GRAD1 whose NEAREST_NEIGHBOR rounds DECREASING up and
    INCREASING down (RoundingDirection read the wrong way round)."""

    name = "rounded-the-wrong-way"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        desc = dict(operator["desc"])
        if "RoundingDirection" in desc:
            decreasing = str(desc["RoundingDirection"]).endswith("DECREASING")
            desc["RoundingDirection"] = (
                "DML_AXIS_DIRECTION_INCREASING" if decreasing else "DML_AXIS_DIRECTION_DECREASING"
            )
        return reference.run({**operator, "desc": desc}, inputs)
