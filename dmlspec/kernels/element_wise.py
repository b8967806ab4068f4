"""The element-wise family as JAX: one table of functions, one primitive that runs them.

`element_wise` is the primitive every ELEMENT_WISE_*, ACTIVATION_* and CAST spec (and
VALUE_SCALE_2D, a scale and bias with one bias per channel) names: the spec's kernel section
gives the function (the operator's name), its parameters (the desc's scalar fields, by field
name), the output data type, and where the operator has them the ScaleBias (applied to the
first input before the function) and the FusedActivation (applied to the result, by the same
table of activations the ACTIVATION_* operators run).

Numerics: FLOAT16 is computed in FLOAT32 and rounded once at the end, as GPUs commonly do;
FLOAT32 in FLOAT32; integers in their own type, wrapping on overflow, with the rules the pages
state (truncating division, ...). Cells the pages leave undefined (integer division by zero,
shifts past the bit width, ...) get whatever XLA computes; the specs mark them undefined.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import erf

from ..expr.scalars import scalar_union_value
from .reduction import first_maximum_one_hot

__all__ = ["ACTIVATIONS", "FUNCTIONS", "element_wise", "fused_activation", "quantize_wide"]

Array = jax.Array
Parameters = Mapping[str, Any]


def _compute_type(dtype: Any) -> Any:
    """FLOAT16 math runs in FLOAT32 (rounded once when stored); other types in their own."""
    return jnp.float32 if dtype == jnp.float16 else dtype


def _is_float(x: Array) -> bool:
    return bool(jnp.issubdtype(x.dtype, jnp.floating))


def _integral(x: Array) -> Array:
    return (x == jnp.floor(x)) & jnp.isfinite(x)


def _pow(base: Array, exponent: Array) -> Array:
    """pow with the page's rule: a negative base needs an integral exponent, else NaN."""
    if not _is_float(base):
        if _is_float(exponent):  # an integer base to a FLOAT power: in FLOAT64, then as CAST
            return _pow(base.astype(jnp.float64), exponent.astype(jnp.float64))
        return jnp.power(base, exponent)
    if base.dtype != jnp.float64:  # XLA's FLOAT32 pow loses accuracy on subnormal bases
        return _pow(base.astype(jnp.float64), exponent.astype(jnp.float64)).astype(base.dtype)
    magnitude = jnp.power(jnp.abs(base), exponent)
    odd = jnp.abs(jnp.fmod(exponent, 2)) == 1
    signed = jnp.where((base < 0) & odd, -magnitude, magnitude)
    return jnp.where((base < 0) & ~_integral(exponent), jnp.nan, signed)


def _truncating_divide(a: Array, b: Array) -> Array:
    return a / b if _is_float(a) else lax.div(a, b)


def _modulus_floor(a: Array, b: Array) -> Array:
    return jnp.remainder(a, b) if _is_float(a) else a - b * jnp.floor_divide(a, b)


def _modulus_truncate(a: Array, b: Array) -> Array:
    return jnp.fmod(a, b) if _is_float(a) else lax.rem(a, b)


def _mean(a: Array, b: Array) -> Array:
    if _is_float(a):
        return (a + b) / 2
    # (a + b) / 2 without intermediate overflow, truncated toward zero as integer division is.
    half = (a >> 1) + (b >> 1)
    both_odd = a & b & 1
    floor = half + both_odd
    odd_sum = (a ^ b) & 1
    negative = floor < 0
    return jnp.where(negative & (odd_sum == 1), floor + 1, floor)


def _shift(left: bool) -> Callable[[Array, Array], Array]:
    def shift(a: Array, b: Array) -> Array:
        amount = b.astype(a.dtype)
        if left:
            return lax.shift_left(a, amount)
        unsigned = jnp.dtype(a.dtype.name.replace("int", "uint")) if a.dtype.kind == "i" else None
        if unsigned is None:
            return lax.shift_right_logical(a, amount)
        # A logical shift of the bits, as the page says, whatever the type's sign.
        bits = lax.bitcast_convert_type(a, unsigned)
        shifted = lax.shift_right_logical(bits, amount.astype(unsigned))
        return lax.bitcast_convert_type(shifted, a.dtype)

    return shift


def _round(x: Array, p: Parameters) -> Array:
    if not _is_float(x):
        return x
    mode = str(p["rounding_mode"]).removeprefix("DML_ROUNDING_MODE_")
    if mode == "HALVES_TO_NEAREST_EVEN":
        return jnp.round(x)
    if mode == "TOWARD_ZERO":
        return jnp.trunc(x)
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + jnp.asarray(0.5, x.dtype))  # halves away


def _sign(x: Array, _: Parameters) -> Array:
    if x.dtype.kind == "u":
        return (x > 0).astype(x.dtype)
    return jnp.where(x > 0, 1, jnp.where(x < 0, -1, 0)).astype(x.dtype)


def _is_infinity(x: Array, p: Parameters) -> Array:
    mode = str(p["infinity_mode"]).removeprefix("DML_IS_INFINITY_MODE_")
    if not _is_float(x):
        return jnp.zeros(x.shape, bool)
    if mode == "POSITIVE":
        return x == jnp.inf
    if mode == "NEGATIVE":
        return x == -jnp.inf
    return jnp.isinf(x)


def _bound(value: Any, dtype: Any) -> Array:
    """A FLOAT bound (Min, Max) in the tensor's type: an integer type takes it as CAST does."""
    if jnp.dtype(dtype).kind in "iu":
        return _cast(jnp.asarray(value, jnp.float64), jnp.dtype(dtype).name)
    return jnp.asarray(value).astype(dtype)


def _clip(x: Array, p: Parameters) -> Array:
    low = _bound(p["min"], x.dtype)
    high = _bound(p["max"], x.dtype)
    return jnp.minimum(high, jnp.maximum(low, x))


def _union(value: Any, dtype: Any) -> Array:
    """A DML_SCALAR_UNION bound (CLIP1, CLIP_GRAD1) as the member of the tensor's type holds
    it (the spec's as_type rule)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        return jnp.asarray(value, dtype)
    return jnp.asarray(np.array(scalar_union_value(value, dtype), dtype))


def _clip1(x: Array, p: Parameters, storage: Any) -> Array:
    """CLIP1's own formula, max(Min, min(x, Max)): Min wins where Min > Max (CLIP: Max). The
    bounds are union members of the tensor's type, whatever type x is computed in."""
    low = _union(p["min"], storage).astype(x.dtype)
    high = _union(p["max"], storage).astype(x.dtype)
    return jnp.maximum(low, jnp.minimum(x, high))


def _clip_grad1(x: Array, gradient: Array, p: Parameters) -> Array:
    low, high = _union(p["min"], x.dtype), _union(p["max"], x.dtype)
    return jnp.where((x <= low) | (x >= high), jnp.zeros_like(gradient), gradient)


def _clip_grad(x: Array, gradient: Array, p: Parameters) -> Array:
    """The gradient where Min < x < Max, compared as numbers (an integer x against FLOAT
    bounds is compared exactly, not against the bounds converted to its type)."""
    wide = x.astype(jnp.float64)
    outside = (wide <= p["min"]) | (wide >= p["max"])
    return jnp.where(outside, jnp.zeros_like(gradient), gradient)


def _value_scale_2d(x: Array, p: Parameters) -> Array:
    """VALUE_SCALE_2D: Scale * x + Bias[c], c the channel (dimension 1 of {N, C, H, W})."""
    bias = np.asarray(p["bias"], dtype=np.float64)
    shape = [1] * x.ndim
    shape[1] = bias.size
    scaled = jnp.asarray(p["scale"], x.dtype) * x + jnp.asarray(bias, x.dtype).reshape(shape)
    # IEEE gives -0 * s + 0 = +0; XLA may fold a "+ 0" away and keep -0 (as in _scaled).
    positive_zero = jnp.asarray(((bias == 0) & ~np.signbit(bias)).reshape(shape))
    return jnp.where((scaled == 0) & positive_zero, jnp.zeros_like(scaled), scaled)


def _rows(x: Array) -> tuple[Array, tuple[int, ...]]:
    """The original SOFTMAX family works on an effective rank of at most 2: rows of the last
    dimension."""
    return x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1), x.shape


def _axes(x: Array, p: Parameters) -> tuple[int, ...]:
    if "axes" in p:
        return tuple(int(a) for a in p["axes"])
    return (x.ndim - 1,)


def _softmax(x: Array, p: Parameters) -> Array:
    axes = _axes(x, p)
    shifted = x - jnp.max(x, axis=axes, keepdims=True)
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=axes, keepdims=True)


def _log_softmax(x: Array, p: Parameters) -> Array:
    axes = _axes(x, p)
    shifted = x - jnp.max(x, axis=axes, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axes, keepdims=True))


def _hardmax(x: Array, p: Parameters) -> Array:
    """1 at the first maximum (row-major over the reduced axes), 0 elsewhere."""
    return first_maximum_one_hot(x, _axes(x, p)).astype(x.dtype)


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + jnp.exp(-x))


def _hard_sigmoid(x: Array, p: Parameters) -> Array:
    return jnp.maximum(0, jnp.minimum(p["alpha"] * x + p["beta"], 1))


# Activations: (x, parameters by field name) -> y. Fused activations run these too.
ACTIVATIONS: dict[str, Callable[[Array, Parameters], Array]] = {
    "ACTIVATION_CELU": lambda x, p: (
        jnp.maximum(0, x) + jnp.minimum(0, p["alpha"] * (jnp.exp(x / p["alpha"]) - 1))
    ),
    "ACTIVATION_ELU": lambda x, p: jnp.where(x >= 0, x, p["alpha"] * (jnp.exp(x) - 1)),
    "ACTIVATION_GELU": lambda x, p: 0.5 * x * (1 + erf(x / jnp.sqrt(2).astype(x.dtype))),
    "ACTIVATION_HARD_SIGMOID": _hard_sigmoid,
    "ACTIVATION_HARD_SWISH": lambda x, p: x * _hard_sigmoid(x, p),
    "ACTIVATION_HARDMAX": _hardmax,
    "ACTIVATION_HARDMAX1": _hardmax,
    "ACTIVATION_IDENTITY": lambda x, p: x,
    "ACTIVATION_LEAKY_RELU": lambda x, p: jnp.where(x >= 0, x, p["alpha"] * x),
    "ACTIVATION_LINEAR": lambda x, p: p["alpha"] * x + p["beta"],
    "ACTIVATION_LOG_SOFTMAX": _log_softmax,
    "ACTIVATION_LOG_SOFTMAX1": _log_softmax,
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda x, p: p["alpha"] * jnp.logaddexp(0, p["beta"] * x),
    "ACTIVATION_RELU": lambda x, p: jnp.maximum(x, jnp.zeros_like(x)),
    "ACTIVATION_SCALED_ELU": lambda x, p: jnp.where(
        x > 0, p["gamma"] * x, p["gamma"] * (p["alpha"] * jnp.exp(x) - p["alpha"])
    ),
    "ACTIVATION_SCALED_TANH": lambda x, p: p["alpha"] * jnp.tanh(p["beta"] * x),
    "ACTIVATION_SHRINK": lambda x, p: jnp.where(
        x > p["threshold"],
        x - p["bias"],
        jnp.where(x < -p["threshold"], x + p["bias"], jnp.zeros_like(x)),
    ),
    "ACTIVATION_SIGMOID": lambda x, p: _sigmoid(x),
    "ACTIVATION_SOFTMAX": _softmax,
    "ACTIVATION_SOFTMAX1": _softmax,
    # ln(1 + exp(y)) as logaddexp(0, y): the page's value, without exp's overflow.
    "ACTIVATION_SOFTPLUS": lambda x, p: jnp.logaddexp(0, p["steepness"] * x) / p["steepness"],
    "ACTIVATION_SOFTSIGN": lambda x, p: x / (1 + jnp.abs(x)),
    "ACTIVATION_SWISH": lambda x, p: x * _sigmoid(p["sigmoid_input_scale"] * x),
    "ACTIVATION_TANH": lambda x, p: jnp.tanh(x),
    "ACTIVATION_THRESHOLDED_RELU": lambda x, p: jnp.where(x > p["alpha"], x, jnp.zeros_like(x)),
}


def _wide(function: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """A function XLA computes less accurately in FLOAT32 than a device must (inverse trig and
    hyperbolic functions near their singular points, tiny arguments flushed): computed in
    FLOAT64 and rounded once."""

    def wide(x: Array) -> Array:
        return function(x.astype(jnp.float64)).astype(x.dtype) if _is_float(x) else function(x)

    return wide


_UNARY: dict[str, Callable[[Array], Array]] = {
    "ABS": jnp.abs,
    "ACOS": _wide(jnp.arccos),
    "ACOSH": _wide(jnp.arccosh),
    "ASIN": _wide(jnp.arcsin),
    "ASINH": _wide(jnp.arcsinh),
    "ATAN": _wide(jnp.arctan),
    "ATANH": _wide(jnp.arctanh),
    "CEIL": lambda x: jnp.ceil(x) if _is_float(x) else x,
    "COS": jnp.cos,
    "COSH": _wide(jnp.cosh),
    "ERF": erf,
    "EXP": jnp.exp,
    "FLOOR": lambda x: jnp.floor(x) if _is_float(x) else x,
    "IDENTITY": lambda x: x,
    "IS_NAN": lambda x: jnp.isnan(x) if _is_float(x) else jnp.zeros(x.shape, bool),
    "LOG": jnp.log,
    "LOGICAL_NOT": lambda x: x == 0,
    "NEGATE": jnp.negative,
    "RECIP": lambda x: 1 / x,
    "SIN": jnp.sin,
    "SINH": _wide(jnp.sinh),
    "SQRT": jnp.sqrt,
    "TAN": jnp.tan,
    "TANH": jnp.tanh,
}

_BINARY: dict[str, Callable[[Array, Array], Array]] = {
    "ADD": jnp.add,
    "ADD1": jnp.add,
    "ATAN_YX": jnp.arctan2,
    "BIT_SHIFT_LEFT": _shift(left=True),
    "BIT_SHIFT_RIGHT": _shift(left=False),
    "DIFFERENCE_SQUARE": lambda a, b: (a - b) * (a - b),
    "DIVIDE": _truncating_divide,
    "LOGICAL_AND": lambda a, b: (a != 0) & (b != 0),
    "LOGICAL_EQUALS": jnp.equal,
    "LOGICAL_GREATER_THAN": jnp.greater,
    "LOGICAL_GREATER_THAN_OR_EQUAL": jnp.greater_equal,
    "LOGICAL_LESS_THAN": jnp.less,
    "LOGICAL_LESS_THAN_OR_EQUAL": jnp.less_equal,
    "LOGICAL_OR": lambda a, b: (a != 0) | (b != 0),
    "LOGICAL_XOR": lambda a, b: (a != 0) != (b != 0),
    "MAX": jnp.maximum,
    "MEAN": _mean,
    "MIN": jnp.minimum,
    "MODULUS_FLOOR": _modulus_floor,
    "MODULUS_TRUNCATE": _modulus_truncate,
    "MULTIPLY": jnp.multiply,
    "POW": _pow,
    "SUBTRACT": jnp.subtract,
}

# Unary functions with parameters: (x, parameters) -> y.
_PARAMETERIZED: dict[str, Callable[[Array, Parameters], Array]] = {
    "CLIP": _clip,
    "CONSTANT_POW": lambda x, p: _pow(x, jnp.asarray(p["exponent"], x.dtype)),
    "IS_INFINITY": _is_infinity,
    "ROUND": _round,
    "SIGN": _sign,
    "THRESHOLD": lambda x, p: jnp.maximum(x, _bound(p["min"], x.dtype)),
    "VALUE_SCALE_2D": _value_scale_2d,
}

# Bit operators read and write each element's encoding (floats as their unsigned integer).
_BITWISE: dict[str, Callable[..., Array]] = {
    "BIT_AND": jnp.bitwise_and,
    "BIT_COUNT": lax.population_count,
    "BIT_NOT": jnp.bitwise_not,
    "BIT_OR": jnp.bitwise_or,
    "BIT_XOR": jnp.bitwise_xor,
}

# Every function the primitive knows, by operator name without its ELEMENT_WISE_ prefix.
FUNCTIONS = frozenset(
    {*_UNARY, *_BINARY, *_PARAMETERIZED, *_BITWISE, *ACTIVATIONS}
    | {"CAST", "CLIP1", "CLIP_GRAD", "CLIP_GRAD1", "IF"}
    | {"ACTIVATION_PARAMETERIZED_RELU", "ACTIVATION_RELU_GRAD"}
    | {"QUANTIZE_LINEAR", "DEQUANTIZE_LINEAR", "QUANTIZED_LINEAR_ADD"}
)


def _cast(x: Array, output_type: str) -> Array:
    """CAST: floats to integers round toward zero and saturate; NaN becomes 0."""
    target = jnp.dtype(output_type)
    if target.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(target)
        low, high = float(info.min), float(info.max)
        wide = x.astype(jnp.float64)  # kernels run with 64-bit types enabled
        clipped = jnp.where(jnp.isnan(wide), 0.0, jnp.clip(jnp.trunc(wide), low, high))
        # float values at the type's edge round up past it (2^63 for INT64): pin them.
        as_int = _integral_to(clipped, target)
        highest = jnp.asarray(np.array(info.max, dtype=target))
        lowest = jnp.asarray(np.array(info.min, dtype=target))
        return jnp.where(wide >= high, highest, jnp.where(wide <= low, lowest, as_int))
    return x.astype(target)


def _integral_to(value: Array, target: np.dtype[Any]) -> Array:
    """Integral FLOAT64 values inside `target`'s range as `target`, exactly on every XLA
    backend. XLA on a GPU converted 2^31 to UINT32 as 2^31 - 1 (measured on an H100), so the
    narrower types go through INT64, which holds them exactly, and UINT64's upper half is
    moved into INT64's range and back."""
    if target.itemsize < 8 or target.kind == "i":
        return value.astype(jnp.int64).astype(target)
    half = 2.0**63
    upper = value >= half
    lower_part = jnp.where(upper, value - half, value).astype(jnp.int64).astype(target)
    return jnp.where(upper, lower_part + jnp.asarray(np.array(2**63, dtype=target)), lower_part)


def _bits_of(x: Array) -> Array:
    """A float's encoding as the unsigned integer of its width (bit operators read the bits)."""
    if x.dtype.kind != "f":
        return x
    return lax.bitcast_convert_type(x, jnp.dtype(f"uint{x.dtype.itemsize * 8}"))


def _quantize(value: Array, scale: Array, zero_point: Array | None, output_type: str) -> Array:
    info = np.iinfo(jnp.dtype(output_type))
    offset = jnp.zeros((), jnp.float32) if zero_point is None else zero_point.astype(jnp.float32)
    quantized = jnp.round(value.astype(jnp.float32) / scale.astype(jnp.float32)) + offset
    return jnp.clip(quantized, info.min, info.max)


def quantize_wide(value: Array, scale: Array, zero_point: Array | None, output_type: str) -> Array:
    """The quantized operators' Quantize function in FLOAT64, clamp(round(value / scale) +
    zero_point, Min, Max): round() halves to even, saturated to the output type. `scale` and
    `zero_point` broadcast against `value`. FLOAT64, not FLOAT32: a value beyond FLOAT32's
    range over a large scale is an ordinary quotient, where FLOAT32 gives infinity / infinity."""
    quantized = jnp.round(value.astype(jnp.float64) / scale.astype(jnp.float64))
    if zero_point is not None:
        quantized = quantized + zero_point.astype(jnp.float64)
    info = np.iinfo(jnp.dtype(output_type))
    return _cast(jnp.clip(quantized, info.min, info.max), output_type)


def _dequantize(value: Array, scale: Array, zero_point: Array | None) -> Array:
    """(input - zero_point) * scale; integer inputs subtract exactly (in 64 bits) first."""
    if zero_point is not None and value.dtype.kind in "iu" and zero_point.dtype.kind in "iu":
        difference = (value.astype(jnp.int64) - zero_point.astype(jnp.int64)).astype(jnp.float32)
    else:
        offset = 0 if zero_point is None else zero_point.astype(jnp.float32)
        difference = value.astype(jnp.float32) - offset
    return difference * scale.astype(jnp.float32)


def _parameters(members: tuple[tuple[str, Any], ...] | None) -> tuple[str, dict[str, Any]]:
    """A fused activation's type and parameters, inline or under "Desc"."""
    values = dict(members or ())
    nested = values.pop("Desc", None)
    if isinstance(nested, tuple):
        values.update(dict(nested))
    kind = str(values.pop("Type")).removeprefix("DML_OPERATOR_")
    if not kind.startswith(("ACTIVATION_", "ELEMENT_WISE_")):
        kind = "ACTIVATION_" + kind
    return kind, {_snake(k): v for k, v in values.items()}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _scaled(x: Array, scale_bias: tuple[tuple[str, Any], ...] | None) -> Array:
    if not scale_bias:
        return x
    values = dict(scale_bias)
    scaled = x * jnp.asarray(values["Scale"], x.dtype) + jnp.asarray(values["Bias"], x.dtype)
    if values["Bias"] == 0 and not np.signbit(values["Bias"]):
        # IEEE gives -0 * s + 0 = +0; XLA folds the "+ 0" away and would keep -0.
        scaled = jnp.where(scaled == 0, jnp.zeros_like(scaled), scaled)
    return scaled


def fused_activation(result: Array, activation: tuple[tuple[str, Any], ...]) -> Array:
    """An operator's FusedActivation (an activation, or ELEMENT_WISE_CLIP) on its result, in
    the result's type."""
    kind, values = _parameters(activation)
    fused = _clip if kind == "ELEMENT_WISE_CLIP" else ACTIVATIONS[kind]  # CLIP fuses too
    return fused(result, values)


def element_wise(
    *inputs: Array | None,
    function: str,
    output_type: str,
    scale_bias: tuple[tuple[str, Any], ...] | None = None,
    activation: tuple[tuple[str, Any], ...] | None = None,
    **parameters: Any,
) -> Array:
    """Run one element-wise or activation function; the result is of `output_type`."""
    name = function.removeprefix("DML_OPERATOR_").removeprefix("ELEMENT_WISE_")
    first = inputs[0]
    assert first is not None
    storage = first.dtype
    compute = _compute_type(storage)
    arrays = [a.astype(_compute_type(a.dtype)) if a is not None else None for a in inputs]
    x = arrays[0]
    assert x is not None
    if name == "CAST":
        return _cast(first, output_type)
    if name in _BITWISE:  # on the encoding, whatever the type: the result keeps its bits
        bits = [_bits_of(a) for a in inputs if a is not None]
        result = _BITWISE[name](*bits)
        if name == "BIT_COUNT" or storage.kind != "f":
            return result.astype(output_type)
        return lax.bitcast_convert_type(result, storage).astype(output_type)
    if scale_bias and storage.kind != "f":
        # ScaleBias makes an integer input real-valued: the result converts as CAST does.
        x = x.astype(jnp.float64)
        compute = jnp.float64
    if name == "QUANTIZE_LINEAR":
        return _quantize(x, arrays[1], arrays[2], output_type)  # type: ignore[arg-type]
    if name == "DEQUANTIZE_LINEAR":
        return _dequantize(x, arrays[1], arrays[2])  # type: ignore[arg-type]
    if name == "QUANTIZED_LINEAR_ADD":
        a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = arrays
        total = _dequantize(a, a_scale, a_zero) + _dequantize(b, b_scale, b_zero)  # type: ignore[arg-type]
        return _quantize(total, out_scale, out_zero, output_type)  # type: ignore[arg-type]
    x = _scaled(x, scale_bias)
    if name in _UNARY:
        result = _UNARY[name](x)
    elif name in _PARAMETERIZED:
        result = _PARAMETERIZED[name](x, parameters)
    elif name in ACTIVATIONS:
        result = ACTIVATIONS[name](x, parameters)
    elif name in _BINARY:
        result = _BINARY[name](x, arrays[1])  # type: ignore[arg-type]
    elif name == "IF":
        result = jnp.where(x != 0, arrays[1], arrays[2])  # type: ignore[arg-type]
    elif name == "CLIP1":
        result = _clip1(x, parameters, storage)
    elif name == "CLIP_GRAD":
        result = _clip_grad(x, arrays[1], parameters)  # type: ignore[arg-type]
    elif name == "CLIP_GRAD1":
        result = _clip_grad1(x, arrays[1], parameters)  # type: ignore[arg-type]
    elif name == "ACTIVATION_RELU_GRAD":
        result = jnp.where(x > 0, arrays[1], jnp.zeros_like(arrays[1]))  # type: ignore[arg-type]
    elif name == "ACTIVATION_PARAMETERIZED_RELU":
        result = jnp.where(x >= 0, x, arrays[1] * x)  # type: ignore[operator]
    else:
        raise ValueError(f"no element-wise function {function!r} (known: {sorted(FUNCTIONS)})")
    if activation:
        result = fused_activation(result.astype(compute), activation)
    if jnp.dtype(output_type).kind in "iu" and result.dtype.kind == "f":
        return _cast(result, output_type)
    return result.astype(output_type)
