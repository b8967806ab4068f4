"""The quantization family as JAX: one table of functions, one primitive that runs them;
QUANTIZE, DEQUANTIZE and DYNAMIC_QUANTIZE_LINEAR.

`quantization` is the primitive their specs name. QUANTIZE and DEQUANTIZE expand their scale
and zero point (per tensor, per axis or blocked: one value per block of InputTensor.Sizes[d] /
Scale.Sizes[d] elements along each dimension) to the input's sizes and run
ELEMENT_WISE_QUANTIZE_LINEAR's and ELEMENT_WISE_DEQUANTIZE_LINEAR's functions: the quotient in
FLOAT32, halves to even, saturated; the dequantized product rounded once.
DYNAMIC_QUANTIZE_LINEAR computes its scale and zero point by the page's formulas in FLOAT32 and
quantizes with them as QUANTIZE does. INT4 and UINT4 are JAX's int4 and uint4 (one value per
element, as the backend contract holds them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from .element_wise import element_wise
from .indexing import member

__all__ = ["FUNCTIONS", "expanded", "quantization"]

Array = jax.Array
F32 = jnp.float32


def expanded(tensor: Array, sizes: Sequence[int]) -> Array:
    """A per-tensor, per-axis or blocked quantization tensor repeated to `sizes`: each value
    over its block of sizes[d] // tensor.shape[d] elements along each dimension."""
    for axis, (size, own) in enumerate(zip(sizes, tensor.shape, strict=True)):
        if own != size:
            tensor = jnp.repeat(tensor, size // own, axis=axis)
    return tensor


def _parameters(quantization: Sequence[Array], sizes: Sequence[int]) -> list[Array | None]:
    scale = expanded(quantization[0], sizes)
    zero_point = expanded(quantization[1], sizes) if len(quantization) > 1 else None
    return [scale, zero_point]


def _quantize(x: Array, quantization: Sequence[Array], *, output_type: str) -> Array:
    scale, zero_point = _parameters(quantization, x.shape)
    result = element_wise(
        x, scale, zero_point, function="ELEMENT_WISE_QUANTIZE_LINEAR", output_type=output_type
    )
    return result.astype(output_type)


def _dequantize(x: Array, quantization: Sequence[Array], *, output_type: str) -> Array:
    scale, zero_point = _parameters(quantization, x.shape)
    result = element_wise(
        x, scale, zero_point, function="ELEMENT_WISE_DEQUANTIZE_LINEAR", output_type=output_type
    )
    return result.astype(output_type)


def _dynamic_quantize_linear(x: Array, *, output_type: str) -> tuple[Array, Array, Array]:
    """The page: OutputScale = (InputMax - InputMin) / (Max - Min), OutputZeroPoint = Min -
    InputMin / OutputScale (rounded half to even, saturated), then QUANTIZE's function with
    them; every step in FLOAT32. Outputs {1, ..., 1} for the scale and zero point."""
    info = jnp.iinfo(jnp.dtype(output_type))  # type: ignore[no-untyped-call]
    wide = x.astype(F32)
    low, high = jnp.min(wide), jnp.max(wide)
    scale = (high - low) / F32(int(info.max) - int(info.min))
    zero_point = jnp.clip(jnp.round(F32(info.min) - low / scale), info.min, info.max)
    ones = (1,) * x.ndim
    zero_point_tensor = zero_point.astype(output_type).reshape(ones)
    quantized = _quantize(x, [scale.reshape(ones), zero_point_tensor], output_type=output_type)
    return quantized, scale.reshape(ones), zero_point_tensor


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "QUANTIZE": _quantize,
    "DEQUANTIZE": _dequantize,
    "DYNAMIC_QUANTIZE_LINEAR": _dynamic_quantize_linear,
}


def quantization(*inputs: Any, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (a tensor
    array as one tuple), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no quantization function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
