"""Backends with the pooling family's realistic bugs, for the suites' meta tests: each runs the
NumPy reference on a desc or data changed the way the bug changes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.fields import Fields, catalog
from dmlspec.reference.layout import is_strided
from dmlspec.reference.pooling import _taps


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


def _packed(operator: Mapping[str, Any]) -> bool:
    return not any(isinstance(v, Mapping) and is_strided(v) for v in operator["desc"].values())


class IgnoredIncludePadding(NumpyBackend):
    """AVERAGE_POOLING, AVERAGE_POOLING1 and AVERAGE_POOLING_GRAD that always divide by the
    input elements a window holds, as if IncludePadding were FALSE."""

    name = "ignored-include-padding"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _kind(operator).startswith("AVERAGE_POOLING"):
            return reference.run(operator, inputs)
        return reference.run(
            {**operator, "desc": {**operator["desc"], "IncludePadding": False}}, inputs
        )


class SwappedPaddingPool(NumpyBackend):
    """Every pooling operator with StartPadding and EndPadding swapped (the padding on the
    wrong side)."""

    name = "swapped-padding"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if "StartPadding" not in operator["desc"]:
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        desc["StartPadding"], desc["EndPadding"] = desc["EndPadding"], desc["StartPadding"]
        return reference.run({**operator, "desc": desc}, inputs)


class LastTieIndex(NumpyBackend):
    """MAX_POOLING1 and MAX_POOLING2 whose OutputIndicesTensor points at the last of equal
    maxima in a window instead of the first (packed tensors): the reference's walk over the
    window with >= where it takes >."""

    name = "last-tie-index"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        desc = operator["desc"]
        if _kind(operator) not in ("MAX_POOLING1", "MAX_POOLING2") or not _packed(operator):
            return outputs
        if desc.get("OutputIndicesTensor") is None:
            return outputs
        fields = Fields(catalog().operator(_kind(operator)), desc)
        best = np.zeros(fields.sizes("OutputTensor"), np.asarray(inputs["InputTensor"]).dtype)
        where = np.full(best.shape, -1, np.int64)
        for value, inside, index in _taps(fields, np.asarray(inputs["InputTensor"])):
            take = inside & ((where < 0) | (value >= best))
            best = np.where(take, value, best)
            where = np.where(take, index, where)
        indices = outputs["OutputIndicesTensor"]
        outputs["OutputIndicesTensor"] = np.maximum(where, 0).astype(indices.dtype)
        return outputs


class SignedLpPower(NumpyBackend):
    """LP_POOLING and LP_POOLING1 that raise the elements themselves to P, not their absolute
    values (the page's formula read without the norm's bars), in FLOAT64 (packed tensors): the
    window sums of x^P (AVERAGE_POOLING1's, IncludePadding TRUE, times the window's size), then
    a signed 1/P-th power."""

    name = "signed-lp-power"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        if not _kind(operator).startswith("LP_POOLING") or not _packed(operator):
            return outputs
        desc = {k: v for k, v in operator["desc"].items() if k != "P"}
        p = int(operator["desc"]["P"])
        spatial = int(desc["DimensionCount"])
        desc.setdefault("Dilations", [1] * spatial)
        average = {
            "type": "DML_OPERATOR_AVERAGE_POOLING1",
            "desc": {**desc, "IncludePadding": True},
        }
        with np.errstate(all="ignore"):
            powers = np.asarray(inputs["InputTensor"], np.float64) ** p
            mean = reference.run_exact(average, {"InputTensor": powers})["OutputTensor"][0]
            summed = mean * float(np.prod(desc["WindowSize"]))
            root = np.sign(summed) * np.abs(summed) ** (1.0 / p)
        outputs["OutputTensor"] = root.astype(outputs["OutputTensor"].dtype)
        return outputs


class UnzeroedUnpool(NumpyBackend):
    """MAX_UNPOOLING that leaves the output cells no index addresses at 1, not zero (an output
    buffer not cleared first)."""

    name = "unzeroed-unpool"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        if _kind(operator) != "MAX_UNPOOLING" or not _packed(operator):
            return outputs
        output = outputs["OutputTensor"]
        untouched = np.ones(output.size, bool)
        indices = np.asarray(inputs["IndicesTensor"]).reshape(-1).astype(np.int64)
        untouched[indices[(indices >= 0) & (indices < output.size)]] = False
        flat = output.reshape(-1).copy()
        flat[untouched] = 1
        outputs["OutputTensor"] = flat.reshape(output.shape)
        return outputs


class WrappedQuantizedPool(NumpyBackend):
    """QUANTIZED_LINEAR_AVERAGE_POOLING that wraps its quantized result into the output type
    (two's complement) instead of saturating it (packed tensors): the reference run into INT32,
    then cast."""

    name = "wrapped-quantized-pool"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        if _kind(operator) != "QUANTIZED_LINEAR_AVERAGE_POOLING" or not _packed(operator):
            return outputs
        desc = dict(operator["desc"])
        desc["OutputTensor"] = {**desc["OutputTensor"], "DataType": "INT32"}
        wide = reference.run({**operator, "desc": desc}, inputs)["OutputTensor"]
        outputs["OutputTensor"] = wide.astype(outputs["OutputTensor"].dtype)
        return outputs
