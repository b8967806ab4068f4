"""The quantization family in NumPy: QUANTIZE, DEQUANTIZE and DYNAMIC_QUANTIZE_LINEAR.

QUANTIZE and DEQUANTIZE view the input in blocks (each dimension d split into Scale.Sizes[d]
blocks of InputTensor.Sizes[d] / Scale.Sizes[d] elements) and broadcast the scale and zero
point over them. QUANTIZE rounds the FLOAT32 quotient input / scale half to even and saturates
(ELEMENT_WISE_QUANTIZE_LINEAR's quantize_linear); where the exact quotient or a multiplication
by the FLOAT32 reciprocal of the scale rounds to another integer, each is recorded as an
alternative (the cell's writes). DEQUANTIZE computes (input - zero_point) * scale in FLOAT64
(exact for these types) and rounds once. DYNAMIC_QUANTIZE_LINEAR follows its page's formulas
in FLOAT32; the zero point and outputs that a scale within 1 ULP or the exact quotients would
change are recorded as alternatives too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from .element_wise import quantize_linear
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["QUANTIZATION"]

F32 = np.float32


def _blocked(x: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """x of shape S viewed as {sizes[0], S[0] / sizes[0], sizes[1], ...}: a block axis after
    each of the quantization tensor's axes."""
    shape: list[int] = []
    for total, count in zip(x.shape, sizes, strict=True):
        shape += [count, total // count]
    return x.reshape(shape)


def _spread(q: np.ndarray) -> np.ndarray:
    """A quantization tensor with a size-1 block axis after each of its axes."""
    return q.reshape([n for size in q.shape for n in (size, 1)])


def _parameters(x: Inputs) -> tuple[np.ndarray, Any]:
    quantization = x["QuantizationTensors"]
    scale = _spread(np.asarray(quantization[0]).astype(np.float64))
    zero_point: Any = 0
    if len(quantization) > 1:
        zero_point = _spread(np.asarray(quantization[1]).astype(np.int64))
    return scale, zero_point


def _quotients(value: np.ndarray, scale: Any) -> list[np.ndarray]:
    """value / scale as the FLOAT32 division (first), exactly (FLOAT64), and as a
    multiplication by the FLOAT32 reciprocal."""
    value32, scale32 = np.asarray(value).astype(F32), np.asarray(scale).astype(F32)
    with np.errstate(all="ignore"):
        return [
            (value32 / scale32).astype(np.float64),
            np.asarray(value).astype(np.float64) / np.asarray(scale).astype(np.float64),
            (value32 * (F32(1) / scale32)).astype(np.float64),
        ]


def _saturated(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Integral FLOAT64 values, already clamped into `dtype`'s range, in `dtype` (NaN, of
    undefined cells, as 0)."""
    return np.asarray(np.nan_to_num(values)).astype(np.int64).astype(dtype)


def _record(
    log: dict[str, WriteLog], name: str, options: list[np.ndarray], dtype: np.dtype[Any]
) -> None:
    """Every cell where the options differ gets each of its distinct values as a write."""
    stacked = np.stack([np.nan_to_num(o).reshape(-1) for o in options])
    for cell in np.nonzero((stacked != stacked[0]).any(axis=0))[0]:
        values = sorted({float(v) for v in stacked[:, cell]})
        writes = log.setdefault(name, [])
        writes.append((np.full(len(values), cell), _saturated(np.array(values), dtype)))


def _quantize(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    data = np.asarray(x["InputTensor"])
    scale, zero_point = _parameters(x)
    blocks = x["QuantizationTensors"][0]
    dtype = f.dtype("OutputTensor")
    value = _blocked(data, np.shape(blocks))
    with np.errstate(all="ignore"):
        options = [
            quantize_linear(q, 1.0, zero_point, dtype).reshape(data.shape)
            for q in _quotients(value, scale)
        ]
    _record(log, "OutputTensor", options, dtype)
    return {"OutputTensor": _saturated(options[0], dtype)}


def _dequantize(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    data = np.asarray(x["InputTensor"])
    scale, zero_point = _parameters(x)
    blocks = x["QuantizationTensors"][0]
    value = _blocked(data.astype(np.int64), np.shape(blocks))
    with np.errstate(all="ignore"):
        result = ((value - zero_point).astype(np.float64) * scale).reshape(data.shape)
        return {"OutputTensor": result.astype(f.dtype("OutputTensor"))}


def _neighbours(value: Any) -> list[Any]:
    """A FLOAT32 value and the FLOAT32 values either side of it."""
    return [value, np.nextafter(value, F32(np.inf)), np.nextafter(value, F32(-np.inf))]


def _dynamic_quantize_linear(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """The page's formulas in FLOAT32: OutputScale = (InputMax - InputMin) / (Max - Min),
    OutputZeroPoint = Min - InputMin / OutputScale, rounded half to even and saturated, then
    clamp(round(InputValue / OutputScale) + OutputZeroPoint, Min, Max)."""
    data = np.asarray(x["InputTensor"]).astype(F32)
    dtype = f.dtype("OutputTensor")
    info = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]
    ones = (1,) * data.ndim
    with np.errstate(all="ignore"):
        low, high = data.min(), data.max()
        scale = F32(high - low) / F32(int(info.max) - int(info.min))
        zero_points: dict[float, list[Any]] = {}  # zero point -> the scales giving it
        for candidate in _neighbours(scale):
            for quotient in _quotients(np.asarray(low), candidate):
                real = F32(info.min) - F32(quotient)
                zero = float(np.clip(np.rint(real), info.min, info.max))
                zero_points.setdefault(zero, []).append(candidate)
        zero = float(np.clip(np.rint(F32(info.min) - low / scale), info.min, info.max))
        outputs = [
            quantize_linear(q, 1.0, z, dtype)
            for z, scales in [(zero, [scale]), *zero_points.items()]
            for s in scales
            for q in _quotients(data, s)
        ]
    _record(log, "OutputTensor", outputs, dtype)
    _record(
        log,
        "OutputZeroPointTensor",
        [np.array([z]) for z in [zero, *zero_points]],
        dtype,
    )
    return {
        "OutputTensor": _saturated(outputs[0], dtype),
        "OutputScaleTensor": np.asarray(scale, F32).reshape(ones),
        "OutputZeroPointTensor": _saturated(np.array(zero), dtype).reshape(ones),
    }


QUANTIZATION: dict[str, Operator] = {
    "QUANTIZE": _quantize,
    "DEQUANTIZE": _dequantize,
    "DYNAMIC_QUANTIZE_LINEAR": _dynamic_quantize_linear,
}
