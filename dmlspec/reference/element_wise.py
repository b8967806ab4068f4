"""The element-wise family (ELEMENT_WISE_*, ACTIVATION_*, CAST), written from the DirectML pages.

Tables, not one function per operator:
- `ACTIVATIONS` (element_wise_activations.py): each activation's formula on float64 values;
  FusedActivation applies the same formula (ELEMENT_WISE_CLIP included) to an operator's result;
- `_RULES`: every other formula: its input fields, its form on float64 values (float tensors)
  and, where the page allows integer tensors, its form on exact Python integers;
- `_BITWISE`: the bit operators, which read each element's native encoding;
- CAST on its own.

Numbers: float tensors are read as float64; the formula (and any fused activation) is computed
there and rounded once to the output type, except that ScaleBias's g(x) and the result a fused
activation reads are held in FLOAT32 (for 16- and 32-bit floats), as a device holds them.
Integer tensors are read as Python integers (object
arrays): the formula is exact, then wrapped to the output width (two's complement). A result
that is not an integer (a FLOAT parameter or ScaleBias took part, or an integer operator writes
a float) converts toward zero, saturating, NaN to 0. FLOAT parameters (Alpha, Min, Scale, ...)
are read as float32, as the C structs hold them (the conversions and the exact integer
operations are in element_wise_numbers.py).

Where a page leaves a result undefined the reference makes a plain choice; `UNDEFINED_NOTES`
lists those cells per operator for the spec owner.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from ..errors import InvalidOperator, Unsupported
from .element_wise_activations import ACTIVATIONS, shrink
from .element_wise_numbers import (
    FLOOR_MOD,
    TRUNC_DIV,
    TRUNC_MOD,
    Formula,
    Params,
    erf,
    held,
    int_pow,
    is_integer,
    to_type,
)
from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog, numpy_dtype, tensor_desc

__all__ = [
    "ELEMENT_WISE_OPERATORS",
    "UNDEFINED_NOTES",
    "element_wise",
    "fused_activation",
    "quantize_linear",
]


def _page_pow(x: Any, exponent: Any) -> Any:
    """pow as the POW pages say: "Negative bases are supported for exponents with integral
    values ..., otherwise this operator returns NaN" (-inf is a negative base too, where C's
    pow would give +inf)."""
    x, exponent = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(exponent, np.float64))
    integral = np.isfinite(exponent) & (exponent == np.floor(exponent))
    return np.where((x < 0) & ~integral, np.nan, np.power(x, exponent))


# ---- the element-wise rules ----------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    """An operator's formula: `real` on float64 values, `exact` on Python integers (None where
    the page allows no integer tensors, or where the formula is not integral)."""

    inputs: tuple[str, ...]
    real: Formula
    exact: Formula | None = None
    # The inputs whose data type picks the integer form (default: all of them).
    kind_fields: tuple[str, ...] | None = None
    # Optional inputs and the value an absent one takes.
    defaults: tuple[tuple[str, float], ...] = ()


_X = ("InputTensor",)
_AB = ("ATensor", "BTensor")
_GRAD = ("InputTensor", "InputGradientTensor")


def _both(inputs: tuple[str, ...], formula: Formula, **kwargs: Any) -> _Rule:
    """A formula that means the same on floats and on exact integers."""
    return _Rule(inputs, formula, formula, **kwargs)


def _unary(function: Callable[[np.ndarray], np.ndarray]) -> _Rule:
    return _Rule(_X, lambda p, x: function(x))


def _clip(p: Params, x: Any) -> Any:
    return np.minimum(p.float32("Max"), np.maximum(p.float32("Min"), x))


def _clip_grad(low: float | int, high: float | int, x: Any, gradient: Any) -> Any:
    return np.where(x <= low, 0, np.where(x >= high, 0, gradient))


def _round(p: Params, x: np.ndarray) -> Any:
    mode = p.enum("RoundingMode", _ROUNDING_MODES, "DML_ROUNDING_MODE_")
    if mode == "HALVES_TO_NEAREST_EVEN":
        return np.rint(x)
    whole = np.trunc(x)
    if mode == "TOWARD_ZERO":
        return whole
    # TOWARD_INFINITY: halves away from zero (x - whole is exact, unlike x + 0.5)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def _is_infinity(p: Params, x: np.ndarray) -> Any:
    mode = p.enum("InfinityMode", _INFINITY_MODES, "DML_IS_INFINITY_MODE_")
    if mode == "POSITIVE":
        return x == math.inf
    if mode == "NEGATIVE":
        return x == -math.inf
    return np.isinf(x)


_ROUNDING_MODES = ("HALVES_TO_NEAREST_EVEN", "TOWARD_ZERO", "TOWARD_INFINITY")
_INFINITY_MODES = ("EITHER", "POSITIVE", "NEGATIVE")


def quantize_linear(value: Any, scale: Any, zero_point: Any, dtype: np.dtype[Any]) -> Any:
    """clamp(round(value / scale) + zero_point, Min, Max), Min/Max the range of integer type
    `dtype` (in FLOAT64, not yet converted); round() names no tie rule: halves go to even.
    The quantized operators of other families quantize through it."""
    info = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]  # INT4, UINT4 too
    return np.clip(np.rint(value / scale) + zero_point, int(info.min), int(info.max))


def _quantize(p: Params, value: np.ndarray, scale: Any, zero_point: Any) -> Any:
    return quantize_linear(value, scale, zero_point, p.output)


def _quantized_add(
    p: Params,
    a: np.ndarray,
    a_scale: np.ndarray,
    a_zero: Any,
    b: np.ndarray,
    b_scale: np.ndarray,
    b_zero: Any,
    out_scale: np.ndarray,
    out_zero: Any,
) -> Any:
    total = (a - a_zero) * a_scale + (b - b_zero) * b_scale
    return _quantize(p, total, out_scale, out_zero)


def _sign(p: Params, x: Any) -> Any:
    # -1 if x < 0, 1 if x > 0, 0 otherwise: NaN and -0 fall in "otherwise"
    return np.where(x > 0, 1, np.where(x < 0, -1, 0))


_RULES: dict[str, _Rule] = {
    **{name: _Rule(_X, formula) for name, formula in ACTIVATIONS.items()},
    # Activations the pages allow on integer tensors.
    "ACTIVATION_RELU": _both(_X, ACTIVATIONS["ACTIVATION_RELU"]),
    "ACTIVATION_SHRINK": _both(_X, shrink),
    "ACTIVATION_PARAMETERIZED_RELU": _both(
        ("InputTensor", "SlopeTensor"), lambda p, x, slope: np.where(x >= 0, x, slope * x)
    ),
    "ACTIVATION_RELU_GRAD": _both(_GRAD, lambda p, x, dy: np.where(x > 0, dy, 0)),
    # Unary math (float tensors only).
    "ELEMENT_WISE_ACOS": _unary(np.arccos),
    "ELEMENT_WISE_ACOSH": _unary(np.arccosh),
    "ELEMENT_WISE_ASIN": _unary(np.arcsin),
    "ELEMENT_WISE_ASINH": _unary(np.arcsinh),
    "ELEMENT_WISE_ATAN": _unary(np.arctan),
    "ELEMENT_WISE_ATANH": _unary(np.arctanh),
    "ELEMENT_WISE_CEIL": _unary(np.ceil),
    "ELEMENT_WISE_COS": _unary(np.cos),
    "ELEMENT_WISE_COSH": _unary(np.cosh),
    "ELEMENT_WISE_ERF": _unary(erf),
    "ELEMENT_WISE_EXP": _unary(np.exp),
    "ELEMENT_WISE_FLOOR": _unary(np.floor),
    "ELEMENT_WISE_LOG": _unary(np.log),  # negative -> NaN ("indefinite"), 0 -> -inf
    "ELEMENT_WISE_RECIP": _unary(lambda x: 1 / x),
    "ELEMENT_WISE_SIN": _unary(np.sin),
    "ELEMENT_WISE_SINH": _unary(np.sinh),
    "ELEMENT_WISE_SQRT": _unary(np.sqrt),
    "ELEMENT_WISE_TAN": _unary(np.tan),
    "ELEMENT_WISE_TANH": _unary(np.tanh),
    "ELEMENT_WISE_ROUND": _Rule(_X, _round),
    "ELEMENT_WISE_IS_NAN": _unary(np.isnan),
    "ELEMENT_WISE_IS_INFINITY": _Rule(_X, _is_infinity),
    "ELEMENT_WISE_CONSTANT_POW": _Rule(_X, lambda p, x: _page_pow(x, p.float32("Exponent"))),
    # Unary, integers too.
    "ELEMENT_WISE_ABS": _both(_X, lambda p, x: np.abs(x)),
    "ELEMENT_WISE_IDENTITY": _both(_X, lambda p, x: x),
    "ELEMENT_WISE_NEGATE": _both(_X, lambda p, x: -x),
    "ELEMENT_WISE_SIGN": _both(_X, _sign),
    "ELEMENT_WISE_CLIP": _both(_X, _clip),
    "ELEMENT_WISE_CLIP1": _both(
        _X, lambda p, x: np.maximum(p.scalar("Min"), np.minimum(x, p.scalar("Max")))
    ),
    "ELEMENT_WISE_THRESHOLD": _both(_X, lambda p, x: np.maximum(x, p.float32("Min"))),
    "ELEMENT_WISE_CLIP_GRAD": _both(
        _GRAD, lambda p, x, dy: _clip_grad(p.float32("Min"), p.float32("Max"), x, dy)
    ),
    "ELEMENT_WISE_CLIP_GRAD1": _both(
        _GRAD, lambda p, x, dy: _clip_grad(p.scalar("Min"), p.scalar("Max"), x, dy)
    ),
    # Binary.
    "ELEMENT_WISE_ADD": _both(_AB, lambda p, a, b: a + b),
    "ELEMENT_WISE_ADD1": _both(_AB, lambda p, a, b: a + b),
    "ELEMENT_WISE_SUBTRACT": _both(_AB, lambda p, a, b: a - b),
    "ELEMENT_WISE_MULTIPLY": _both(_AB, lambda p, a, b: a * b),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _both(_AB, lambda p, a, b: (a - b) * (a - b)),
    "ELEMENT_WISE_MAX": _both(_AB, lambda p, a, b: np.maximum(a, b)),
    "ELEMENT_WISE_MIN": _both(_AB, lambda p, a, b: np.minimum(a, b)),
    "ELEMENT_WISE_ATAN_YX": _Rule(_AB, lambda p, y, x: np.arctan2(y, x)),
    # "For integer divisions, the result is truncated."
    "ELEMENT_WISE_DIVIDE": _Rule(_AB, lambda p, a, b: a / b, lambda p, a, b: TRUNC_DIV(a, b)),
    # (a + b) / 2; integers halve the exact sum toward zero, as DIVIDE's integer divisions.
    "ELEMENT_WISE_MEAN": _Rule(
        _AB, lambda p, a, b: (a + b) / 2, lambda p, a, b: TRUNC_DIV(a + b, 2)
    ),
    # a - b * floor(a / b): Python's %; np.mod is that, from the exact fmod.
    "ELEMENT_WISE_MODULUS_FLOOR": _Rule(
        _AB, lambda p, a, b: np.mod(a, b), lambda p, a, b: FLOOR_MOD(a, b)
    ),
    # a - b * trunc(a / b): C's %, exactly np.fmod on floats.
    "ELEMENT_WISE_MODULUS_TRUNCATE": _Rule(
        _AB, lambda p, a, b: np.fmod(a, b), lambda p, a, b: TRUNC_MOD(a, b)
    ),
    "ELEMENT_WISE_POW": _Rule(
        ("InputTensor", "ExponentTensor"),
        lambda p, x, e: _page_pow(x, e),
        lambda p, x, e: int_pow(p.output.itemsize * 8)(x, e),
    ),
    # Comparisons and logic: 1 for true, 0 for false.
    "ELEMENT_WISE_LOGICAL_EQUALS": _both(_AB, lambda p, a, b: a == b),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _both(_AB, lambda p, a, b: a > b),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _both(_AB, lambda p, a, b: a >= b),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _both(_AB, lambda p, a, b: a < b),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _both(_AB, lambda p, a, b: a <= b),
    "ELEMENT_WISE_LOGICAL_AND": _both(_AB, lambda p, a, b: np.logical_and(a != 0, b != 0)),
    "ELEMENT_WISE_LOGICAL_OR": _both(_AB, lambda p, a, b: np.logical_or(a != 0, b != 0)),
    "ELEMENT_WISE_LOGICAL_XOR": _both(_AB, lambda p, a, b: (a != 0) != (b != 0)),
    "ELEMENT_WISE_LOGICAL_NOT": _both(_X, lambda p, x: x == 0),
    "ELEMENT_WISE_IF": _both(
        ("ConditionTensor", "ATensor", "BTensor"),
        lambda p, condition, a, b: np.where(condition != 0, a, b),
        kind_fields=_AB,
    ),
    # Quantization: always through float64 (every integer involved fits exactly).
    "ELEMENT_WISE_QUANTIZE_LINEAR": _Rule(
        ("InputTensor", "ScaleTensor", "ZeroPointTensor"),
        _quantize,
        defaults=(("ZeroPointTensor", 0.0),),
    ),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _Rule(
        ("InputTensor", "ScaleTensor", "ZeroPointTensor"),
        lambda p, x, scale, zero_point: (x - zero_point) * scale,
        defaults=(("ZeroPointTensor", 0.0),),
    ),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _Rule(
        (
            "ATensor",
            "AScaleTensor",
            "AZeroPointTensor",
            "BTensor",
            "BScaleTensor",
            "BZeroPointTensor",
            "OutputScaleTensor",
            "OutputZeroPointTensor",
        ),
        _quantized_add,
        defaults=(
            ("AZeroPointTensor", 0.0),
            ("BZeroPointTensor", 0.0),
            ("OutputZeroPointTensor", 0.0),
        ),
    ),
}

# What a FusedActivation may hold: the activations' formulas, and ELEMENT_WISE_CLIP.
_FUSABLE: dict[str, Formula] = {**ACTIVATIONS, "ELEMENT_WISE_CLIP": _clip}


# ---- bitwise: each element's native encoding, as an unsigned integer of its width ----------


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.dtype(f"u{array.dtype.itemsize}"))


def _shift(left: bool) -> Formula:
    def shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        width = a.dtype.itemsize * 8
        count = np.minimum(b, width - 1).astype(a.dtype)
        moved = np.left_shift(a, count) if left else np.right_shift(a, count)
        return np.where(b >= width, 0, moved).astype(a.dtype)  # see UNDEFINED_NOTES

    return shift


_BITWISE: dict[str, tuple[tuple[str, ...], Formula]] = {
    "ELEMENT_WISE_BIT_AND": (_AB, np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": (_AB, np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": (_AB, np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": (_X, np.invert),
    "ELEMENT_WISE_BIT_COUNT": (_X, np.bitwise_count),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": (_AB, _shift(left=True)),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": (_AB, _shift(left=False)),
}


def _bitwise(name: str, inputs: Mapping[str, np.ndarray], dtype: np.dtype[Any]) -> np.ndarray:
    fields, formula = _BITWISE[name]
    result = np.asarray(formula(*(_bits(inputs[f]) for f in fields)))
    if name == "ELEMENT_WISE_BIT_COUNT":
        return result.astype(dtype)  # a count, in the output's own type
    return result.view(dtype)


# ---- CAST ----------------------------------------------------------------------------------


def _cast(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Floats round to nearest even; float -> integer goes toward zero, saturating, NaN -> 0;
    integer -> integer wraps (the page is silent: UNDEFINED_NOTES)."""
    if values.dtype.kind != "f" and dtype.kind == "f":
        return values.astype(dtype)  # NumPy's integer -> float cast rounds to nearest even
    return to_type(values, dtype)


# ---- the entry point -----------------------------------------------------------------------


ELEMENT_WISE_OPERATORS: frozenset[str] = frozenset({*_RULES, *_BITWISE, "CAST"})


def fused_activation(
    operator: str, fused: Mapping[str, Any] | None, values: np.ndarray
) -> np.ndarray:
    """FusedActivation: the activation's formula on the operator's (unrounded) result."""
    if not fused:
        return values
    kind = str(fused.get("Type", "")).removeprefix("DML_OPERATOR_")
    if kind not in _FUSABLE:
        raise Unsupported(f"FusedActivation of {operator}: the reference cannot fuse {kind!r}.")
    fields = fused.get("Desc", fused)
    params = Params(f"{operator}'s FusedActivation {kind}", fields, np.dtype(np.float64))
    return np.asarray(_FUSABLE[kind](params, values), dtype=np.float64)


def _apply(
    name: str,
    rule: _Rule,
    desc: Mapping[str, Any],
    inputs: Mapping[str, np.ndarray],
    dtype: np.dtype[Any],
) -> np.ndarray:
    defaults = dict(rule.defaults)
    for field in rule.inputs:
        if field not in inputs and field not in defaults:
            raise ValueError(f"{name} needs its {field} input; the inputs have none.")
    scale_bias = desc.get("ScaleBias")
    exact = (
        rule.exact is not None
        and not scale_bias
        and all(is_integer(inputs[f]) for f in rule.kind_fields or rule.inputs)
    )
    arguments: list[Any] = []
    for field in rule.inputs:
        if field not in inputs:
            arguments.append(defaults[field])
            continue
        value = inputs[field]
        if exact:
            arguments.append(value.astype(object))
            continue
        real = value.astype(np.float64)
        if scale_bias and field == "InputTensor":  # g(x) = x * Scale + Bias, before f
            real = real * float(np.float32(scale_bias["Scale"])) + float(
                np.float32(scale_bias["Bias"])
            )
            real = held(real, value.dtype)
        arguments.append(real)
    params = Params(name, desc, dtype)
    formula = rule.exact if exact and rule.exact is not None else rule.real
    result = np.asarray(formula(params, *arguments))
    if desc.get("FusedActivation"):
        activation_input = held(result.astype(np.float64), dtype)
        result = fused_activation(name, desc["FusedActivation"], activation_input)
    return to_type(result, dtype)


def element_wise(
    name: str, desc: Mapping[str, Any], inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """One element-wise operator: `name` is the spec name (a DML_OPERATOR_ prefix is allowed),
    `desc` the operator's JSON desc, `inputs` the logical input arrays by field name. Returns
    {output field: array of the output's DataType and Sizes}."""
    name = name.removeprefix("DML_OPERATOR_")
    if name not in ELEMENT_WISE_OPERATORS:
        raise Unsupported(f"the element-wise reference has no {name!r}")
    output_field = "OutputGradientTensor" if "_GRAD" in name else "OutputTensor"
    output = tensor_desc(desc[output_field])
    dtype = numpy_dtype(output["DataType"])
    arrays = {field: np.asarray(value) for field, value in inputs.items()}
    with np.errstate(all="ignore"):
        if name == "CAST":
            result = _cast(arrays["InputTensor"], dtype)
        elif name in _BITWISE:
            result = _bitwise(name, arrays, dtype)
        else:
            result = _apply(name, _RULES[name], desc, arrays, dtype)
    return {output_field: np.broadcast_to(result, tuple(output["Sizes"])).astype(dtype)}


# ---- what the pages leave undefined --------------------------------------------------------

_WRAPS = (
    "Integer results outside the output type: the page gives the formula and no overflow "
    "rule; the reference wraps (the exact result modulo 2^bits, two's complement)."
)
_SCALE_BIAS_ON_INTEGERS = (
    "ScaleBias on an integer tensor: g(x) = x * Scale + Bias is real-valued and the page does "
    "not say how it returns to the integer type; the reference computes in float64 and "
    "converts the result toward zero, saturating (NaN -> 0)."
)
_NAN_MIN_MAX = (
    "NaN: max(a, b)/min(a, b) are 'the larger/smaller of the two values', undefined for NaN; "
    "the reference propagates NaN. Which zero max(-0, +0) returns is not said either."
)
_NOT_INTEGRAL = (
    "Integer tensors with a FLOAT parameter whose result is not an integer (or not in range): "
    "the page does not say how it converts; the reference goes toward zero, saturating."
)
_NAN_HARDMAX = (
    "NaN: 'the first maximum' is undefined with NaN; the reference (NumPy's argmax) takes "
    "the first NaN as the maximum."
)
_SHIFT = (
    "Shift counts >= the element width: the page gives ({}) with no rule (C leaves it "
    "undefined, HLSL masks the count); the reference writes 0."
)
_ROUND_TIES = (
    "round() names no tie rule; the reference rounds halves to even. NaN (and a NaN from "
    "0/0) has no quantized value; the reference writes 0, and ±inf saturates."
)

UNDEFINED_NOTES: dict[str, str] = {
    "CAST": (
        "The page says only 'Casts each element in the input to the data type of the output "
        "tensor'. Undefined: float -> integer rounding (the reference truncates toward zero), "
        "float values outside the integer range (the reference saturates) and NaN (the "
        "reference writes 0); integer -> integer values outside the output range (the "
        "reference wraps, two's complement); float -> narrower float overflow and integer -> "
        "float rounding (the reference rounds to nearest even, overflowing to ±inf)."
    ),
    "ELEMENT_WISE_ABS": "INT_MIN (e.g. -128 in INT8) has no absolute value in its type; "
    "the reference wraps to INT_MIN. " + _SCALE_BIAS_ON_INTEGERS,
    "ELEMENT_WISE_NEGATE": "-INT_MIN does not fit its type; the reference wraps to INT_MIN.",
    "ELEMENT_WISE_ADD": _WRAPS,
    "ELEMENT_WISE_SUBTRACT": _WRAPS,
    "ELEMENT_WISE_MULTIPLY": _WRAPS,
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _WRAPS,
    "ELEMENT_WISE_DIVIDE": (
        "Integer division by zero: the page says only 'For integer divisions, the result is "
        "truncated.'; the reference writes 0. INT_MIN / -1 overflows; the reference wraps to "
        "INT_MIN."
    ),
    "ELEMENT_WISE_MODULUS_FLOOR": "Integer b == 0: a - b * floor(a / b) divides by zero; "
    "the reference writes 0. (Float b == 0 gives NaN through the formula.)",
    "ELEMENT_WISE_MODULUS_TRUNCATE": "Integer b == 0: a - b * trunc(a / b) divides by zero; "
    "the reference writes 0. (Float b == 0 gives NaN through the formula.)",
    "ELEMENT_WISE_MEAN": (
        "Integer tensors: (a + b) / 2 with no integer rule: neither how an odd sum rounds nor "
        "whether a + b may overflow before halving. The reference halves the exact sum, "
        "truncating toward zero (as DIVIDE's page says of integer divisions)."
    ),
    "ELEMENT_WISE_MAX": _NAN_MIN_MAX,
    "ELEMENT_WISE_MIN": _NAN_MIN_MAX,
    "ELEMENT_WISE_CLIP": _NAN_MIN_MAX + " " + _NOT_INTEGRAL + " " + _SCALE_BIAS_ON_INTEGERS,
    "ELEMENT_WISE_CLIP1": _NAN_MIN_MAX + " " + _SCALE_BIAS_ON_INTEGERS,
    "ELEMENT_WISE_THRESHOLD": _NAN_MIN_MAX + " " + _NOT_INTEGRAL + " " + _SCALE_BIAS_ON_INTEGERS,
    "ELEMENT_WISE_IDENTITY": _SCALE_BIAS_ON_INTEGERS,
    "ELEMENT_WISE_SIGN": (
        "NaN: the pseudocode's 'otherwise' branch gives 0 (the page names only negative zero "
        "there); the reference writes 0."
    ),
    "ELEMENT_WISE_POW": (
        "Integer tensors: the page 'guarantees exact results', impossible where the power "
        "does not fit the type (the reference wraps) or the exponent is negative (the "
        "reference truncates 1 / x^n toward zero: 1, ±1 for -1, else 0; 0 to a negative "
        "power writes 0). Mixed integer/float tensors convert toward zero, saturating. "
        "ScaleBias applies to InputTensor only (the page: 'each *input* element'). "
        + _SCALE_BIAS_ON_INTEGERS
    ),
    "ELEMENT_WISE_ATAN_YX": (
        "The page: 'This operator is undefined for the origin' (both inputs 0); the reference "
        "writes atan2's value there (±0 or ±pi by the zeros' signs)."
    ),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _SHIFT.format("a << b"),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _SHIFT.format("a >> b"),
    "ELEMENT_WISE_QUANTIZE_LINEAR": (
        "The page: 'A scale value of 0 results in undefined behavior'. "
        + _ROUND_TIES
        + " The page gives no value for an absent ZeroPointTensor; the reference uses 0 (as "
        "QUANTIZED_LINEAR_ADD's page says of its zero points)."
    ),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": (
        "The page: 'A scale value of 0 results in undefined behavior' (the reference writes "
        "(x - zero_point) * 0). The page gives no value for an absent ZeroPointTensor; the "
        "reference uses 0."
    ),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": "OutputScale 0 is not addressed. " + _ROUND_TIES,
    "ACTIVATION_HARDMAX": _NAN_HARDMAX,
    "ACTIVATION_HARDMAX1": _NAN_HARDMAX,
    "ACTIVATION_RELU": "NaN: max(0, NaN) is undefined; the reference propagates NaN.",
    "ACTIVATION_SHRINK": _NOT_INTEGRAL + " E.g. UINT8 1 - Bias 2 saturates to 0.",
    "ACTIVATION_PARAMETERIZED_RELU": "Integer slope * x outside the type (INT8 -128 * -1): "
    "the page has no overflow rule; the reference wraps.",
}


# ---- operators read through their fields (not a formula of the table) -------------------


def value_scale_2d(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """VALUE_SCALE_2D: "Output = Scale * Input + Bias", one Bias per channel (dimension 1 of
    {BatchCount, ChannelCount, Height, Width}). FLOAT Scale and Bias are float32s; the value
    is computed in float64 and rounded once to the output type."""
    if "InputTensor" not in x:
        raise ValueError("the inputs have no InputTensor")
    data, dtype = np.asarray(x["InputTensor"]), f.dtype("OutputTensor")
    bias = f.floats32("Bias")
    if data.ndim < 2 or len(bias) != data.shape[1]:
        raise InvalidOperator(
            f"VALUE_SCALE_2D's Bias must hold one value per channel (InputTensor.Sizes[1] = "
            f"{data.shape[1] if data.ndim > 1 else None}); got {len(bias)}"
        )
    channel_bias = np.array(bias, dtype=np.float64).reshape([1, -1] + [1] * (data.ndim - 2))
    with np.errstate(all="ignore"):
        result = f.float32("Scale") * data.astype(np.float64) + channel_bias
        return {"OutputTensor": result.astype(dtype)}


# VALUE_SCALE_2D: a scale and one bias per channel, read through the desc's fields.
FIELD_OPERATORS: dict[str, Operator] = {"VALUE_SCALE_2D": value_scale_2d}
