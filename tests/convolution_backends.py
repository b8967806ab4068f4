"""Backends with the convolution family's realistic bugs, for the suites' meta tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.backends.onnxruntime.backend import OnnxRuntimeBackend
from dmlspec.reference.element_wise import fused_activation
from dmlspec.reference.layout import is_strided


def _float16_sums(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A x B over the leading dimensions, each product added one at a time into FLOAT16."""
    total = np.zeros((*a.shape[:-1], b.shape[-1]), np.float16)
    for k in range(a.shape[-1]):
        term = a[..., :, k : k + 1].astype(np.float16) * b[..., k : k + 1, :].astype(np.float16)
        total = (total + term).astype(np.float16)
    return total


class HalfAccumulatingGemm(NumpyBackend):
    """GEMM whose products are accumulated in FLOAT16 for FLOAT32 outputs (packed tensors;
    Alpha, Beta, C and the FusedActivation applied as the page says, in FLOAT64)."""

    name = "half-accumulating"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        desc = operator["desc"]
        broken = (
            str(operator["type"]).removeprefix("DML_OPERATOR_") == "GEMM"
            and not any(isinstance(v, Mapping) and is_strided(v) for v in desc.values())
            and str(desc["OutputTensor"]["DataType"]).endswith("FLOAT32")
        )
        if not broken:
            return outputs
        a, b = np.asarray(inputs["ATensor"]), np.asarray(inputs["BTensor"])
        if str(desc["TransA"]).endswith("TRANSPOSE"):
            a = np.swapaxes(a, -1, -2)
        if str(desc["TransB"]).endswith("TRANSPOSE"):
            b = np.swapaxes(b, -1, -2)
        with np.errstate(all="ignore"):
            result = float(desc["Alpha"]) * _float16_sums(a, b).astype(np.float64)
            if inputs.get("CTensor") is not None:
                result = result + float(desc["Beta"]) * np.asarray(inputs["CTensor"], np.float64)
            result = fused_activation("GEMM", desc.get("FusedActivation"), result)
            outputs["OutputTensor"] = result.astype(np.float32)
        return outputs


class OnnxRuntimeAt6_4(OnnxRuntimeBackend):
    """onnxruntime claiming DML_FEATURE_LEVEL_6_4, for the operators introduced there (FOLD,
    UNFOLD): the backend itself claims 5_0, the highest level whose rows it runs catalog-wide."""

    feature_level = "6_4"

    def __init__(self) -> None:
        super().__init__()
        self.name = "onnxruntime"  # its expected failures and skips are onnxruntime's


class SwappedPaddingFold(NumpyBackend):
    """FOLD and UNFOLD with StartPadding and EndPadding swapped (the padding on the wrong side)."""

    name = "swapped-padding"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if str(operator["type"]).removeprefix("DML_OPERATOR_") not in ("FOLD", "UNFOLD"):
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        desc["StartPadding"], desc["EndPadding"] = desc["EndPadding"], desc["StartPadding"]
        return reference.run({**operator, "desc": desc}, inputs)
