"""Backends for the quantization family's meta tests: onnxruntime claiming feature level 6_4
(QUANTIZE and DEQUANTIZE are 6_3 operators; the onnxruntime backend claims 5_0 for the whole
catalog), and realistic bugs, each the NumPy reference on a changed computation."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


class HalvesAwayFromZero(NumpyBackend):
    """QUANTIZE and DYNAMIC_QUANTIZE_LINEAR rounding halves away from zero (C's round()),
    not to even: the reference's quantized values moved where the quotient is a half."""

    name = "halves-away-from-zero"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        quantization = importlib.import_module("dmlspec.reference.quantization")
        original = quantization.quantize_linear

        def away(value: Any, scale: Any, zero_point: Any, dtype: np.dtype[Any]) -> Any:
            quotient = np.asarray(value / scale, dtype=np.float64)
            with np.errstate(invalid="ignore"):
                rounded = np.sign(quotient) * np.floor(np.abs(quotient) + 0.5)
            return original(rounded, 1.0, zero_point, dtype)

        quantization.quantize_linear = away  # type: ignore[attr-defined]
        try:
            return reference.run(operator, inputs)
        finally:
            quantization.quantize_linear = original  # type: ignore[attr-defined]


class Wrapping(NumpyBackend):
    """QUANTIZE without saturation: the rounded sum wraps into the output type (INT8's 128 is
    -128); DEQUANTIZE and DYNAMIC_QUANTIZE_LINEAR as the reference."""

    name = "wrapping"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if _kind(operator) != "QUANTIZE":
            return reference.run(operator, inputs)
        quantization = [np.asarray(q) for q in inputs["QuantizationTensors"]]
        x = np.asarray(inputs["InputTensor"])
        scale = quantization[0].astype(np.float32)
        zero = quantization[1] if len(quantization) > 1 else np.zeros(scale.shape, np.int64)
        zero = zero.astype(np.int64)
        for axis, size in enumerate(x.shape):
            scale = np.repeat(scale, size // scale.shape[axis], axis=axis)
            zero = np.repeat(zero, size // zero.shape[axis], axis=axis)
        with np.errstate(all="ignore"):
            rounded = np.rint(x.astype(np.float32) / scale)
            rounded = np.nan_to_num(rounded, posinf=0, neginf=0).astype(np.int64) + zero
        dtype = np.dtype(str(operator["desc"]["OutputTensor"]["DataType"]).lower())
        bits = 4 if dtype.name.endswith("4") else 8 * dtype.itemsize
        low = rounded % (1 << bits)
        if dtype.name.startswith("int"):
            low = np.where(low >= 1 << (bits - 1), low - (1 << bits), low)
        return {"OutputTensor": low.astype(dtype)}


class TruncatedZeroPoint(NumpyBackend):
    """DYNAMIC_QUANTIZE_LINEAR whose zero point is truncated toward zero instead of rounded
    (a C cast of Min - InputMin / OutputScale); the outputs quantized with it."""

    name = "truncated-zero-point"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        expected = reference.run(operator, inputs)
        if _kind(operator) != "DYNAMIC_QUANTIZE_LINEAR":
            return expected
        x = np.asarray(inputs["InputTensor"]).astype(np.float32)
        dtype = expected["OutputTensor"].dtype
        low, high = (-128, 127) if dtype == np.int8 else (0, 255)
        with np.errstate(all="ignore"):
            scale = np.float32(x.max() - x.min()) / np.float32(high - low)
            zero = np.nan_to_num(np.clip(np.trunc(np.float32(low) - x.min() / scale), low, high))
            quantized = np.nan_to_num(np.clip(np.rint(x / scale) + zero, low, high))
        ones = (1,) * x.ndim
        return {
            "OutputTensor": quantized.astype(dtype),
            "OutputScaleTensor": expected["OutputScaleTensor"],
            "OutputZeroPointTensor": np.array(zero, dtype).reshape(ones),
        }
