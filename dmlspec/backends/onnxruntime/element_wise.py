"""The element-wise family (ELEMENT_WISE_*, ACTIVATION_*, CAST) for the onnxruntime backend.

Each operator is a small ONNX graph built by an entry of `OPERATORS` (operator name to builder)
and run by onnxruntime's CPU provider. How the graphs compute:

- FLOAT16 is computed in float32 and cast back once, as a device would; FLOAT32 in float32.
- Integers are computed in int64 (signed) or uint64 (unsigned) and cast back, which wraps as
  DirectML's overflow does, and reaches the types onnxruntime's CPU kernels lack (Max of INT16,
  Where of UINT16, ...). Integer divisors of 0 (undefined on the pages) are replaced by 1 so
  that onnxruntime does not stop or crash; such cells are undefined anyway.
- Bitwise operators read the data in its native encoding (the pages: "the tensor data type is
  ignored except for determining the width"): float tensors are viewed as unsigned integers of
  the same width before the graph, the result viewed back after it.
- ScaleBias {Scale, Bias} is applied to the input first (Scale * x + Bias); a FusedActivation
  is appended to the graph, applied to the operator's result before the cast to the output type.
- Where ONNX has no operator the graph writes the page's formula (ATAN_YX, BIT_COUNT, GELU with
  opset 18, the rounding modes, the modulus of floats, the multi-axis softmax family).

The activations' graphs are in element_wise_activations.py (`ACTIVATIONS`, a FusedActivation's
too); the types the graphs compute in and the bounds and divisors they feed, in
element_wise_numbers.py.

Scalar parameters (Alpha, Min, Exponent, ...) and reshape sizes are fed to the graph as inputs,
so one session serves every value (onnxruntime_graph.py caches sessions by graph structure).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import Unsupported
from .element_wise_activations import ACTIVATIONS
from .element_wise_numbers import (
    bound,
    compare_with_bound,
    nonzero_divisor,
    outward,
    scalar_number,
    to_float,
    union_value,
    wide,
    wide_type,
)
from .graph import Builder, Call, Graph

__all__ = ["ELEMENT_WISE", "OPERATORS", "run"]

# ---- fields, FusedActivation ---------------------------------------------------------------


def _params(raw: Any) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        return {}
    desc = raw.get("Desc")
    return desc if isinstance(desc, Mapping) else raw


def _enum(value: Any, prefix: str) -> str:
    return str(value).removeprefix(prefix)


def fused_activation(g: Graph, value: str, raw: Any) -> str:
    """An operator's FusedActivation on its (float) result, as the activation's graph."""
    if not raw:
        return value
    if not isinstance(raw, Mapping):
        raise Unsupported(f"FusedActivation {raw!r} is not an operator")
    kind = str(raw.get("Type", raw.get("type", ""))).removeprefix("DML_OPERATOR_")
    build = ACTIVATIONS.get(kind.removeprefix("ACTIVATION_"))
    if build is None or not kind.startswith("ACTIVATION_"):
        raise Unsupported(f"FusedActivation {kind!r} has no onnxruntime graph here")
    return build(g, to_float(g, value), _params(raw))


# ---- operators ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    inputs: tuple[str, ...]  # tensor fields, in the order the builder takes them
    build: Callable[..., str]  # (graph, desc, *input values) -> the result value
    float_only: bool = False  # computed in float32 (float64 never reaches these)
    bitwise: bool = False  # inputs viewed as unsigned integers of their width


def _scale_bias(g: Graph, x: str, desc: Mapping[str, Any]) -> str:
    raw = desc.get("ScaleBias")
    if not raw:
        return x
    if g.dtype(x).kind != "f":
        raise Unsupported("ScaleBias on an integer tensor: the page does not say how it rounds")
    return g.op(
        "Add",
        g.op("Mul", x, g.scalar(float(raw["Scale"]), x)),
        g.scalar(float(raw["Bias"]), x),
    )


def _unary(op_type: str, **attributes: Any) -> Entry:
    return Entry(
        ("InputTensor",),
        lambda g, d, x: g.op(op_type, _scale_bias(g, x, d), **attributes),
        float_only=True,
    )


def _unary_any(build: Callable[[Graph, Mapping[str, Any], str], str]) -> Entry:
    """An operator of floats or integers: ScaleBias, then `build` in the wide type."""
    return Entry(("InputTensor",), lambda g, d, x: build(g, d, _scale_bias(g, wide(g, x), d)))


def _binary(build: Callable[[Graph, str, str], str]) -> Entry:
    return Entry(("ATensor", "BTensor"), lambda g, d, a, b: build(g, wide(g, a), wide(g, b)))


def _logical(op_type: str) -> Entry:
    def build(g: Graph, d: Mapping[str, Any], a: str, b: str) -> str:
        zero_a, zero_b = g.scalar(0, a), g.scalar(0, b)
        a_true = g.op("Not", g.compare("Equal", a, zero_a))
        b_true = g.op("Not", g.compare("Equal", b, zero_b))
        return g.op(op_type, a_true, b_true, dtype=np.bool_)

    return Entry(("ATensor", "BTensor"), build)


def _comparison(op_type: str) -> Entry:
    return _binary(lambda g, a, b: g.compare(op_type, a, g.cast(b, g.dtype(a))))


def _round(g: Graph, d: Mapping[str, Any], x: str) -> str:
    mode = _enum(d.get("RoundingMode", "HALVES_TO_NEAREST_EVEN"), "DML_ROUNDING_MODE_")
    if mode == "HALVES_TO_NEAREST_EVEN":
        return g.op("Round", x)
    negative = g.compare("Less", x, g.scalar(0, x))
    if mode == "TOWARD_ZERO":
        return g.where(negative, g.op("Ceil", x), g.op("Floor", x))
    if mode == "TOWARD_INFINITY":  # halves away from zero: on |x|, floor + (fraction >= 0.5)
        magnitude = g.op("Abs", x)
        whole = g.op("Floor", magnitude)
        up = g.compare("GreaterOrEqual", g.op("Sub", magnitude, whole), g.scalar(0.5, x))
        rounded = g.where(up, g.op("Add", whole, g.scalar(1, x)), whole)
        return g.where(negative, g.op("Neg", rounded), rounded)
    raise Unsupported(f"RoundingMode {mode!r}")


def _is_infinity(g: Graph, d: Mapping[str, Any], x: str) -> str:
    mode = _enum(d.get("InfinityMode", "EITHER"), "DML_IS_INFINITY_MODE_")
    flags = {"EITHER": (1, 1), "POSITIVE": (1, 0), "NEGATIVE": (0, 1)}.get(mode)
    if flags is None:
        raise Unsupported(f"InfinityMode {mode!r}")
    return g.op("IsInf", x, dtype=np.bool_, detect_positive=flags[0], detect_negative=flags[1])


def _sign(g: Graph, d: Mapping[str, Any], x: str) -> str:
    # -1 below 0, 1 above, 0 otherwise (-0 and NaN too, as the page's formula reads).
    zero = g.scalar(0, x)
    above = g.cast(g.compare("Greater", x, zero), g.dtype(x))
    if g.dtype(x).kind == "u":
        return above
    return g.op("Sub", above, g.cast(g.compare("Less", x, zero), g.dtype(x)))


def _clip(g: Graph, x: str, low: Any, high: Any, min_first: bool) -> str:
    low_value, high_value = bound(g, low, x), bound(g, high, x)
    if min_first:  # CLIP1: max(Min, min(x, Max))
        return g.op("Max", low_value, g.op("Min", x, high_value))
    return g.op("Min", high_value, g.op("Max", low_value, x))  # CLIP: min(Max, max(Min, x))


def _clip_grad(union: bool) -> Entry:
    def build(g: Graph, d: Mapping[str, Any], x: str, gradient: str) -> str:
        x, gradient = wide(g, x), wide(g, gradient)
        if union:
            low = union_value(scalar_number(d["Min"]), d["MinMaxDataType"])
            high = union_value(scalar_number(d["Max"]), d["MinMaxDataType"])
        elif g.dtype(x).kind in "iu":  # compared as numbers: x <= -1.5 is x <= -2
            low, high = outward(d["Min"], math.floor), outward(d["Max"], math.ceil)
        else:
            low, high = d["Min"], d["Max"]
        outside = g.op(
            "Or",
            compare_with_bound(g, "LessOrEqual", x, low),
            compare_with_bound(g, "GreaterOrEqual", x, high),
            dtype=np.bool_,
        )
        return g.where(outside, g.scalar(0, gradient), gradient)

    return Entry(("InputTensor", "InputGradientTensor"), build)


def _divide(g: Graph, a: str, b: str) -> str:
    return g.op("Div", a, nonzero_divisor(g, a, b))


def _modulus(floor: bool) -> Callable[[Graph, str, str], str]:
    def build(g: Graph, a: str, b: str) -> str:
        if g.dtype(a).kind in "iu":
            return g.op("Mod", a, nonzero_divisor(g, a, b), fmod=0 if floor else 1)
        remainder = g.op("Mod", a, b, fmod=1)  # C fmod: the sign of a
        if not floor:
            return remainder
        zero = g.scalar(0, a)
        # a - b * floor(a / b): a nonzero remainder whose sign differs from b's moves by b.
        moves = g.op(
            "And",
            g.op("Not", g.compare("Equal", remainder, zero)),
            g.op(
                "Xor",
                g.compare("Less", remainder, zero),
                g.compare("Less", b, zero),
                dtype=np.bool_,
            ),
            dtype=np.bool_,
        )
        return g.where(moves, g.op("Add", remainder, b), remainder)

    return build


def _mean(g: Graph, a: str, b: str) -> str:
    total = g.op("Add", a, b)
    if g.dtype(a).kind == "f":
        return g.op("Mul", total, g.scalar(0.5, total))
    return g.op("Div", total, g.scalar(2, total))  # exact sum in 64 bits, truncated half


def _atan_yx(g: Graph, d: Mapping[str, Any], y: str, x: str) -> str:
    """atan2(y, x) from Atan(y / x) and the quadrant; x == 0: +-pi/2 (0 when y is 0 too)."""
    y, x = to_float(g, y), to_float(g, x)
    zero = g.scalar(0, x)
    base = g.op("Atan", g.op("Div", y, x))
    y_negative = g.compare("Less", y, zero)
    half_turn = g.where(y_negative, g.scalar(-math.pi, x), g.scalar(math.pi, x))
    shifted = g.where(g.compare("Less", x, zero), g.op("Add", base, half_turn), base)
    both_zero = g.op(
        "And", g.compare("Equal", x, zero), g.compare("Equal", y, zero), dtype=np.bool_
    )
    return g.where(both_zero, zero, shifted)


def _bit_view(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(f"uint{dtype.itemsize * 8}")


def _bit_count(g: Graph, d: Mapping[str, Any], x: str) -> str:
    """Population count (no ONNX operator): the 64-bit SWAR sum of bits."""
    x = g.cast(x, np.uint64)

    def shift(value: str, bits: int) -> str:
        return g.op("BitShift", value, g.scalar(bits, value), direction="RIGHT")

    def mask(value: str, pattern: int) -> str:
        return g.op("BitwiseAnd", value, g.scalar(pattern, value))

    x = g.op("Sub", x, mask(shift(x, 1), 0x5555555555555555))
    x = g.op("Add", mask(x, 0x3333333333333333), mask(shift(x, 2), 0x3333333333333333))
    x = mask(g.op("Add", x, shift(x, 4)), 0x0F0F0F0F0F0F0F0F)
    return shift(g.op("Mul", x, g.scalar(0x0101010101010101, x)), 56)


def _pow(g: Graph, d: Mapping[str, Any], x: str, exponent: str) -> str:
    x = _scale_bias(g, x, d)
    if g.dtype(x).kind == "f":
        x = to_float(g, x)
        return g.op("Pow", x, g.cast(exponent, g.dtype(x)))
    # Integers: exact in float64 while |result| < 2^53, truncated toward zero (2^-1 == 0).
    powered = g.op("Pow", g.cast(x, np.float64), g.cast(exponent, np.float64))
    return g.cast(powered, wide_type(g.dtype(x)))


def _dequantize(g: Graph, d: Mapping[str, Any], x: str, scale: str, *zero: str) -> str:
    x = g.cast(x, np.int64)  # every quantized type fits, and the difference is signed
    shifted = g.op("Sub", x, g.cast(zero[0], np.int64)) if zero else x
    return g.op("Mul", g.cast(shifted, np.float32), g.cast(scale, np.float32))


def _quantize_value(g: Graph, value: str, scale: str, zero: tuple[str, ...], out: Any) -> str:
    info = np.iinfo(out)
    quotient = g.op("Round", g.op("Div", value, g.cast(scale, np.float32)))
    if zero:
        quotient = g.op("Add", quotient, g.cast(zero[0], np.float32))
    low, high = g.scalar(info.min, quotient), g.scalar(info.max, quotient)
    return g.op("Min", g.op("Max", quotient, low), high)


def _quantize(out_dtype: np.dtype[Any]) -> Callable[..., str]:
    def build(g: Graph, d: Mapping[str, Any], x: str, scale: str, *zero: str) -> str:
        return _quantize_value(g, g.cast(x, np.float32), scale, zero, out_dtype)

    return build


def _quantized_add(out_dtype: np.dtype[Any]) -> Callable[..., str]:
    def build(g: Graph, d: Mapping[str, Any], **t: str) -> str:
        def value(prefix: str) -> str:
            zero = (t[f"{prefix}ZeroPointTensor"],) if f"{prefix}ZeroPointTensor" in t else ()
            return _dequantize(g, d, t[f"{prefix}Tensor"], t[f"{prefix}ScaleTensor"], *zero)

        total = g.op("Add", value("A"), value("B"))
        zero = ("OutputZeroPointTensor",) if "OutputZeroPointTensor" in t else ()
        return _quantize_value(
            g, total, t["OutputScaleTensor"], tuple(t[z] for z in zero), out_dtype
        )

    return build


def _if(g: Graph, d: Mapping[str, Any], condition: str, a: str, b: str) -> str:
    chosen = g.op("Not", g.compare("Equal", condition, g.scalar(0, condition)))
    return g.where(chosen, a, g.cast(b, g.dtype(a)))


def _activation_entry(kind: str) -> Entry:
    build = ACTIVATIONS[kind]
    return Entry(("InputTensor",), lambda g, d, x: build(g, x, d), float_only=True)


def _relu(g: Graph, d: Mapping[str, Any], x: str) -> str:
    return g.op("Relu", wide(g, x)) if g.dtype(x).kind != "f" else g.op("Relu", to_float(g, x))


def _prelu(g: Graph, d: Mapping[str, Any], x: str, slope: str) -> str:
    x, slope = wide(g, x), wide(g, slope)
    negative = g.compare("Less", x, g.scalar(0, x))
    return g.where(negative, g.op("Mul", x, g.cast(slope, g.dtype(x))), x)


def _relu_grad(g: Graph, d: Mapping[str, Any], x: str, gradient: str) -> str:
    x, gradient = wide(g, x), wide(g, gradient)
    return g.where(g.compare("Greater", x, g.scalar(0, x)), gradient, g.scalar(0, gradient))


def _shrink(g: Graph, d: Mapping[str, Any], x: str) -> str:
    if g.dtype(x).kind == "f":
        return ACTIVATIONS["SHRINK"](g, to_float(g, x), d)
    # Integers: the page's formula in float64 (exact for 32 bits), saturated to the type and
    # truncated back; by Where, since onnxruntime's Shrink rounds a float64 x - Bias through
    # float32 (2147483647 - 3 gave 2147483648).
    info = np.iinfo(g.dtype(x))
    wide = g.cast(x, np.float64)
    threshold, bias = float(d["Threshold"]), float(d["Bias"])
    below = g.where(
        g.compare("Less", wide, g.scalar(-threshold, wide)),
        g.op("Add", wide, g.scalar(bias, wide)),
        g.scalar(0.0, wide),
    )
    above = g.compare("Greater", wide, g.scalar(threshold, wide))
    shrunk = g.where(above, g.op("Sub", wide, g.scalar(bias, wide)), below)
    return g.op("Clip", shrunk, g.scalar(info.min, wide), g.scalar(info.max, wide))


_UNARY_FLOAT = {
    "ACOS": "Acos",
    "ACOSH": "Acosh",
    "ASIN": "Asin",
    "ASINH": "Asinh",
    "ATAN": "Atan",
    "ATANH": "Atanh",
    "CEIL": "Ceil",
    "COS": "Cos",
    "COSH": "Cosh",
    "ERF": "Erf",
    "EXP": "Exp",
    "FLOOR": "Floor",
    "LOG": "Log",
    "RECIP": "Reciprocal",
    "SIN": "Sin",
    "SINH": "Sinh",
    "SQRT": "Sqrt",
    "TAN": "Tan",
    "TANH": "Tanh",
}

_NEEDS_OUTPUT_TYPE = {"ELEMENT_WISE_QUANTIZE_LINEAR", "ELEMENT_WISE_QUANTIZED_LINEAR_ADD"}


def _operators(out_dtype: np.dtype[Any]) -> dict[str, Entry]:
    table: dict[str, Entry] = {
        f"ELEMENT_WISE_{name}": _unary(op_type) for name, op_type in _UNARY_FLOAT.items()
    }
    quantized_inputs = (
        "ATensor",
        "AScaleTensor",
        "AZeroPointTensor",
        "BTensor",
        "BScaleTensor",
        "BZeroPointTensor",
        "OutputScaleTensor",
        "OutputZeroPointTensor",
    )
    table.update(
        {
            "ELEMENT_WISE_ABS": _unary_any(lambda g, d, x: g.op("Abs", x)),
            "ELEMENT_WISE_IDENTITY": _unary_any(lambda g, d, x: x),
            "ELEMENT_WISE_NEGATE": _unary_any(lambda g, d, x: g.op("Neg", x)),
            "ELEMENT_WISE_SIGN": _unary_any(_sign),
            "ELEMENT_WISE_CLIP": _unary_any(lambda g, d, x: _clip(g, x, d["Min"], d["Max"], False)),
            "ELEMENT_WISE_CLIP1": _unary_any(
                lambda g, d, x: _clip(
                    g,
                    x,
                    union_value(scalar_number(d["Min"]), d["MinMaxDataType"]),
                    union_value(scalar_number(d["Max"]), d["MinMaxDataType"]),
                    True,
                )
            ),
            "ELEMENT_WISE_THRESHOLD": _unary_any(
                lambda g, d, x: g.op("Max", x, bound(g, d["Min"], x))
            ),
            "ELEMENT_WISE_CLIP_GRAD": _clip_grad(union=False),
            "ELEMENT_WISE_CLIP_GRAD1": _clip_grad(union=True),
            "ELEMENT_WISE_CONSTANT_POW": Entry(
                ("InputTensor",),
                lambda g, d, x: g.op(
                    "Pow",
                    _scale_bias(g, x, d),
                    g.scalar(float(d["Exponent"]), x),
                ),
                float_only=True,
            ),
            "ELEMENT_WISE_ROUND": Entry(("InputTensor",), _round, float_only=True),
            "ELEMENT_WISE_IS_INFINITY": Entry(("InputTensor",), _is_infinity, float_only=True),
            "ELEMENT_WISE_IS_NAN": Entry(
                ("InputTensor",),
                lambda g, d, x: g.op("IsNaN", x, dtype=np.bool_),
                float_only=True,
            ),
            "ELEMENT_WISE_ADD": _binary(lambda g, a, b: g.op("Add", a, b)),
            "ELEMENT_WISE_ADD1": _binary(lambda g, a, b: g.op("Add", a, b)),
            "ELEMENT_WISE_SUBTRACT": _binary(lambda g, a, b: g.op("Sub", a, b)),
            "ELEMENT_WISE_MULTIPLY": _binary(lambda g, a, b: g.op("Mul", a, b)),
            "ELEMENT_WISE_DIVIDE": _binary(_divide),
            "ELEMENT_WISE_MAX": _binary(lambda g, a, b: g.op("Max", a, b)),
            "ELEMENT_WISE_MIN": _binary(lambda g, a, b: g.op("Min", a, b)),
            "ELEMENT_WISE_MEAN": _binary(_mean),
            "ELEMENT_WISE_DIFFERENCE_SQUARE": _binary(
                lambda g, a, b: g.op("Mul", g.op("Sub", a, b), g.op("Sub", a, b))
            ),
            "ELEMENT_WISE_MODULUS_FLOOR": _binary(_modulus(floor=True)),
            "ELEMENT_WISE_MODULUS_TRUNCATE": _binary(_modulus(floor=False)),
            "ELEMENT_WISE_ATAN_YX": Entry(("ATensor", "BTensor"), _atan_yx, float_only=True),
            "ELEMENT_WISE_POW": Entry(("InputTensor", "ExponentTensor"), _pow),
            "ELEMENT_WISE_BIT_AND": Entry(
                ("ATensor", "BTensor"), lambda g, d, a, b: g.op("BitwiseAnd", a, b), bitwise=True
            ),
            "ELEMENT_WISE_BIT_OR": Entry(
                ("ATensor", "BTensor"), lambda g, d, a, b: g.op("BitwiseOr", a, b), bitwise=True
            ),
            "ELEMENT_WISE_BIT_XOR": Entry(
                ("ATensor", "BTensor"), lambda g, d, a, b: g.op("BitwiseXor", a, b), bitwise=True
            ),
            "ELEMENT_WISE_BIT_NOT": Entry(
                ("InputTensor",), lambda g, d, x: g.op("BitwiseNot", x), bitwise=True
            ),
            "ELEMENT_WISE_BIT_COUNT": Entry(("InputTensor",), _bit_count, bitwise=True),
            "ELEMENT_WISE_BIT_SHIFT_LEFT": Entry(
                ("ATensor", "BTensor"),
                lambda g, d, a, b: g.op("BitShift", a, g.cast(b, g.dtype(a)), direction="LEFT"),
                bitwise=True,
            ),
            "ELEMENT_WISE_BIT_SHIFT_RIGHT": Entry(
                ("ATensor", "BTensor"),
                lambda g, d, a, b: g.op("BitShift", a, g.cast(b, g.dtype(a)), direction="RIGHT"),
                bitwise=True,
            ),
            "ELEMENT_WISE_LOGICAL_AND": _logical("And"),
            "ELEMENT_WISE_LOGICAL_OR": _logical("Or"),
            "ELEMENT_WISE_LOGICAL_XOR": _logical("Xor"),
            "ELEMENT_WISE_LOGICAL_NOT": Entry(
                ("InputTensor",),
                lambda g, d, x: g.compare("Equal", x, g.scalar(0, x)),
            ),
            "ELEMENT_WISE_LOGICAL_EQUALS": _comparison("Equal"),
            "ELEMENT_WISE_LOGICAL_GREATER_THAN": _comparison("Greater"),
            "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _comparison("GreaterOrEqual"),
            "ELEMENT_WISE_LOGICAL_LESS_THAN": _comparison("Less"),
            "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _comparison("LessOrEqual"),
            "ELEMENT_WISE_IF": Entry(("ConditionTensor", "ATensor", "BTensor"), _if),
            "ELEMENT_WISE_DEQUANTIZE_LINEAR": Entry(
                ("InputTensor", "ScaleTensor", "ZeroPointTensor"), _dequantize
            ),
            "ELEMENT_WISE_QUANTIZE_LINEAR": Entry(
                ("InputTensor", "ScaleTensor", "ZeroPointTensor"), _quantize(out_dtype)
            ),
            "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": Entry(quantized_inputs, _quantized_add(out_dtype)),
            "CAST": Entry(("InputTensor",), lambda g, d, x: x),
            "ACTIVATION_RELU": Entry(("InputTensor",), _relu),
            "ACTIVATION_PARAMETERIZED_RELU": Entry(("InputTensor", "SlopeTensor"), _prelu),
            "ACTIVATION_RELU_GRAD": Entry(("InputTensor", "InputGradientTensor"), _relu_grad),
            "ACTIVATION_SHRINK": Entry(("InputTensor",), _shrink),
        }
    )
    for kind in ACTIVATIONS:
        table.setdefault(f"ACTIVATION_{kind}", _activation_entry(kind))
    return table


OPERATORS: dict[str, Entry] = _operators(np.dtype(np.uint8))
ELEMENT_WISE = frozenset(OPERATORS)


def run(
    kind: str, desc: Mapping[str, Any], inputs: Mapping[str, Any], out_dtype: np.dtype[Any]
) -> np.ndarray:
    """The element-wise operator `kind` (no DML_OPERATOR_ prefix) on packed inputs."""
    entry = _operators(out_dtype)[kind] if kind in _NEEDS_OUTPUT_TYPE else OPERATORS[kind]
    g = Graph()
    arrays = {
        name: np.asarray(inputs[name]) for name in entry.inputs if inputs.get(name) is not None
    }
    if not arrays:
        raise Unsupported(f"{kind}: no input tensors")
    g.shape = next(iter(arrays.values())).shape
    values: dict[str, str] = {}
    for name, array in arrays.items():
        if entry.bitwise:
            array = np.ascontiguousarray(array).view(_bit_view(array.dtype))
        values[name] = g.feed(array)
    if entry.float_only:
        values = {name: to_float(g, value) for name, value in values.items()}
    if kind == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
        result = entry.build(g, desc, **values)
    else:
        result = entry.build(g, desc, *values.values())
    fused = desc.get("FusedActivation")
    if fused:
        if out_dtype.kind != "f":
            raise Unsupported("FusedActivation needs a FLOAT16 or FLOAT32 output")
        result = fused_activation(g, result, fused)
    if entry.bitwise and out_dtype.kind == "f":
        bits = g.run(g.cast(result, _bit_view(out_dtype)))
        return bits.view(out_dtype)
    return g.run(g.cast(result, out_dtype))


def _value_scale_2d(c: Call) -> dict[str, str]:
    """Scale * x + Bias[channel], in float32 (FLOAT16 rounded once at the end)."""
    g = c.g
    x = g.cast(c.feed("InputTensor"), np.float32)
    bias = np.array([float(b) for b in c.desc["Bias"]], np.float32)
    scaled = g.op("Mul", x, g.scalar(float(c.desc["Scale"]), x))
    return {"OutputTensor": g.op("Add", scaled, g.feed(bias.reshape(1, -1, 1, 1)))}


# Operators of the family built through their fields as graphs (graph.run_operator).
GRAPHS: dict[str, Builder] = {"VALUE_SCALE_2D": _value_scale_2d}
