"""Backends with the convolution family's realistic bugs, for the suites' meta tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
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


def _convolution(operator: Mapping[str, Any]) -> bool:
    return str(operator["type"]).removeprefix("DML_OPERATOR_") == "CONVOLUTION"


class FlippedCrossCorrelation(NumpyBackend):
    """CONVOLUTION that flips the filter for CROSS_CORRELATION as well (the Mode read the wrong
    way round), otherwise the reference."""

    name = "flipped-cross-correlation"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _convolution(operator):
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        mode = str(desc["Mode"]).removeprefix("DML_CONVOLUTION_MODE_")
        desc["Mode"] = "CONVOLUTION" if mode == "CROSS_CORRELATION" else "CROSS_CORRELATION"
        return reference.run({**operator, "desc": desc}, inputs)


class SwappedPadding(NumpyBackend):
    """CONVOLUTION and CONVOLUTION_INTEGER that pad each spatial dimension on the wrong side
    (StartPadding at the end, EndPadding at the start), otherwise the reference."""

    name = "swapped-padding"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind not in ("CONVOLUTION", "CONVOLUTION_INTEGER"):
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        desc["StartPadding"], desc["EndPadding"] = desc["EndPadding"], desc["StartPadding"]
        return reference.run({**operator, "desc": desc}, inputs)


class HalfPrecisionConvolution(NumpyBackend):
    """CONVOLUTION computing FLOAT32 in FLOAT16 (inputs and result rounded to it, as a device
    allowed half precision would), otherwise the reference."""

    name = "half-precision-convolution"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        desc = operator["desc"]
        if not _convolution(operator) or any(
            isinstance(v, Mapping) and is_strided(v) for v in desc.values()
        ):
            return outputs
        if not str(desc["OutputTensor"]["DataType"]).endswith("FLOAT32"):
            return outputs
        with np.errstate(all="ignore"):
            halved = {k: np.asarray(v).astype(np.float16) for k, v in inputs.items()}
            result = reference.run(operator, {k: v.astype(np.float32) for k, v in halved.items()})
            outputs["OutputTensor"] = result["OutputTensor"].astype(np.float16).astype(np.float32)
        return outputs


def _packed(operator: Mapping[str, Any]) -> bool:
    return not any(isinstance(v, Mapping) and is_strided(v) for v in operator["desc"].values())


class IgnoringZeroPoints(NumpyBackend):
    """MATRIX_MULTIPLY_INTEGER, MATRIX_MULTIPLY_INTEGER_TO_FLOAT and CONVOLUTION_INTEGER that
    multiply their inputs as given, never subtracting their zero points."""

    name = "ignoring-zero-points"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind.startswith("MATRIX_MULTIPLY_INTEGER") or kind == "CONVOLUTION_INTEGER":
            zero = {"AZeroPointTensor", "BZeroPointTensor"}
            zero |= {"InputZeroPointTensor", "FilterZeroPointTensor"}
            inputs = {k: np.zeros_like(v) if k in zero else v for k, v in inputs.items()}
        return reference.run(operator, inputs)


class WrappingQuantizedMatMul(NumpyBackend):
    """QUANTIZED_LINEAR_MATRIX_MULTIPLY whose requantized result wraps into the output type
    (two's complement) instead of saturating (packed tensors)."""

    name = "wrapping-quantized"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind != "QUANTIZED_LINEAR_MATRIX_MULTIPLY" or not _packed(operator):
            return outputs

        def given(field: str, shape: tuple[int, int]) -> np.ndarray:
            if field not in inputs:
                return np.zeros((1, 1))
            return np.asarray(inputs[field], np.float64).reshape(shape)

        a = np.asarray(inputs["ATensor"], np.float64) - given("AZeroPointTensor", (-1, 1))
        b = np.asarray(inputs["BTensor"], np.float64) - given("BZeroPointTensor", (1, -1))
        with np.errstate(all="ignore"):
            real = np.matmul(a * given("AScaleTensor", (-1, 1)), b * given("BScaleTensor", (1, -1)))
            quantized = np.rint(real / given("OutputScaleTensor", (-1, 1)))
            quantized = quantized + given("OutputZeroPointTensor", (-1, 1))
            wide = np.where(np.isfinite(quantized), quantized, 0).astype(np.int64)
        dtype = outputs["OutputTensor"].dtype
        outputs["OutputTensor"] = wide.astype(dtype)  # wraps
        return outputs


class SwappedPaddingFold(NumpyBackend):
    """FOLD and UNFOLD with StartPadding and EndPadding swapped (the padding on the wrong side)."""

    name = "swapped-padding"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if str(operator["type"]).removeprefix("DML_OPERATOR_") not in ("FOLD", "UNFOLD"):
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        desc["StartPadding"], desc["EndPadding"] = desc["EndPadding"], desc["StartPadding"]
        return reference.run({**operator, "desc": desc}, inputs)


_INTEGER_FIELDS = (
    "InputTensor",
    "InputZeroPointTensor",
    "FilterTensor",
    "FilterZeroPointTensor",
    "DimensionCount",
    "Strides",
    "Dilations",
    "StartPadding",
    "EndPadding",
    "GroupCount",
)


class WrappingQuantizedConvolution(NumpyBackend):
    """QUANTIZED_LINEAR_CONVOLUTION whose requantized result wraps into the output type (two's
    complement) instead of saturating (packed tensors): the integer sum is the reference's
    CONVOLUTION_INTEGER of the same fields."""

    name = "wrapping-quantized"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind != "QUANTIZED_LINEAR_CONVOLUTION" or not _packed(operator):
            return outputs
        desc = operator["desc"]
        sizes = desc["OutputTensor"]["Sizes"]
        integer = {
            "type": "DML_OPERATOR_CONVOLUTION_INTEGER",
            "desc": {
                **{k: desc[k] for k in _INTEGER_FIELDS if desc.get(k) is not None},
                "OutputTensor": {"DataType": "INT32", "Sizes": sizes},
            },
        }
        given = {k: v for k, v in inputs.items() if k in _INTEGER_FIELDS}
        total = reference.run(integer, given)["OutputTensor"].astype(np.float64)

        def value(field: str, shape: tuple[int, ...] = ()) -> Any:
            if inputs.get(field) is None:
                return 0.0
            return np.asarray(inputs[field], np.float64).reshape(shape)

        channels = (1, -1, *(1,) * (len(sizes) - 2))
        with np.errstate(all="ignore"):
            real = (total + value("BiasTensor", channels)) * value("InputScaleTensor")
            real = real * value("FilterScaleTensor", channels)
            quantized = np.rint(real / value("OutputScaleTensor")) + value("OutputZeroPointTensor")
            wide = np.where(np.isfinite(quantized), quantized, 0).astype(np.int64)
        outputs["OutputTensor"] = wide.astype(outputs["OutputTensor"].dtype)  # wraps
        return outputs
