"""The onnxruntime backend's element-wise family against the pages: documented examples,
hand-computed cases (ScaleBias, FusedActivation, integer rounding), and every operator either
running or reporting Unsupported. Where onnxruntime differs from a page the difference is in
DIVERGENCES (operator -> what differs and why), shown by a test, not hidden."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dmlspec import Unsupported, load_catalog
from dmlspec.backends.onnxruntime.backend import OnnxRuntimeBackend
from dmlspec.backends.onnxruntime.element_wise import ELEMENT_WISE
from dmlspec.conformance.base_desc import base_descs
from dmlspec.model import ExampleTensor

pytest.importorskip("onnxruntime")

CATALOG = load_catalog()
BACKEND = OnnxRuntimeBackend()
FAMILY = sorted(
    spec.name
    for spec in CATALOG.operators
    if spec.name.startswith(("ELEMENT_WISE_", "ACTIVATION_")) or spec.name == "CAST"
)

# Where onnxruntime's result differs from what DirectML's page says (or where the page is silent
# and onnxruntime's choice is one a device need not make). Each is shown by a test below.
DIVERGENCES: dict[str, str] = {
    "CAST": (
        "Float to integer out of range, infinite or NaN: the page (DML_CAST_OPERATOR_DESC) says "
        "nothing of saturation; onnxruntime's Cast is a C++ static_cast, so 300.7 -> INT8 gives "
        "44 (wrapped), NaN/inf -> INT32 give INT32_MIN and -1.5 -> UINT8 gives 255, where a "
        "saturating device gives 127, 0/INT32_MAX and 0."
    ),
    "ELEMENT_WISE_MAX": (
        "NaN: the page's f(a, b) = max(a, b) does not say; onnxruntime's Max returns NaN when "
        "either input is NaN, where an IEEE maxNum (HLSL max) returns the other input."
    ),
    "ELEMENT_WISE_MIN": (
        "NaN: the page's f(a, b) = min(a, b) does not say; onnxruntime's Min returns NaN when "
        "either input is NaN, where an IEEE minNum (HLSL min) returns the other input."
    ),
    "ELEMENT_WISE_CLIP": (
        "NaN input: min(Max, max(Min, x)) is built from ONNX Max/Min, which propagate NaN; "
        "with minNum/maxNum a device returns Min (the page is silent)."
    ),
    "ELEMENT_WISE_CLIP1": "NaN input: as ELEMENT_WISE_CLIP (ONNX Max/Min propagate NaN).",
    "ELEMENT_WISE_THRESHOLD": "NaN input: max(x, Min) with ONNX Max gives NaN, maxNum gives Min.",
    "ELEMENT_WISE_BIT_SHIFT_LEFT": (
        "Shift counts >= the bit width: the page's f(a, b) = (a << b) does not say; onnxruntime's "
        "BitShift gives 0, where a GPU shift (HLSL <<) uses the count modulo the width."
    ),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": (
        "Shift counts >= the bit width: as BIT_SHIFT_LEFT, onnxruntime gives 0 where HLSL >> "
        "shifts by the count modulo the width."
    ),
    "ELEMENT_WISE_POW": (
        "Integer tensors: the page guarantees exact results; the graph computes pow in float64 "
        "(onnxruntime's integer Pow goes through double too) and casts back, so results past "
        "2^53 are inexact and results outside the type are not wrapped (static_cast)."
    ),
    "ELEMENT_WISE_ATAN_YX": (
        "ONNX has no Atan2: the graph is atan(y / x) with the quadrant fixed, so both inputs "
        "infinite give NaN (atan2 gives +-pi/4 or +-3pi/4), and atan2(+-0, -0) gives 0 (atan2 "
        "gives +-pi)."
    ),
    "ELEMENT_WISE_DIVIDE": (
        "Integer division by 0 (undefined on the page): onnxruntime stops with 'Integer division "
        "by zero', so the graph divides by 1 there and the cell holds A."
    ),
    "ELEMENT_WISE_MODULUS_FLOOR": (
        "Integer modulus by 0 (undefined on the page): onnxruntime stops, so the graph takes the "
        "modulus by 1 there and the cell holds 0."
    ),
    "ELEMENT_WISE_MODULUS_TRUNCATE": "Integer modulus by 0: as ELEMENT_WISE_MODULUS_FLOOR.",
}


def dtype_of(name: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(name).numpy)


def tensor(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def run(kind: str, desc: dict[str, Any], **inputs: Any) -> np.ndarray:
    """Runs `kind` on 1-D inputs; tensors in the desc are made from the inputs' types."""
    full = dict(desc)
    for name, array in inputs.items():
        full.setdefault(name, tensor(np.asarray(array).dtype.name.upper(), list(np.shape(array))))
    out = "OutputGradientTensor" if "InputGradientTensor" in inputs else "OutputTensor"
    return BACKEND.run({"type": f"DML_OPERATOR_{kind}", "desc": full}, inputs)[out]


def close(actual: np.ndarray, expected: Any, dtype: Any = np.float32) -> None:
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    np.testing.assert_allclose(
        actual.astype(np.float64), expected, rtol=1e-3, atol=1e-6, equal_nan=True
    )


def exact(actual: np.ndarray, expected: Any, dtype: Any) -> None:
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    assert actual.tolist() == np.asarray(expected, dtype=dtype).tolist()


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def out(data_type: str, n: int) -> dict[str, Any]:
    return {"OutputTensor": tensor(data_type, [n])}


# ---- documented examples -----------------------------------------------------------------


def _complete(name: str, fields: dict[str, Any]) -> bool:
    """The example gives its output's values and every input tensor (the pages print some
    examples in fragments: HARDMAX1 and LOG_SOFTMAX1 give the input once, then the outputs)."""
    spec = CATALOG.operator(name)
    tensors = [f.name for f in spec.fields if f.kind == "input_tensor" and not f.optional]
    output = fields.get("OutputTensor")
    return (
        isinstance(output, ExampleTensor)
        and output.values is not None
        and all(isinstance(fields.get(t), ExampleTensor) for t in tensors)
    )


EXAMPLES = [
    (name, example.id)
    for name in FAMILY
    for example in CATALOG.operator(name).examples
    if _complete(name, example.valid_form.as_dict())
]


def test_the_family_has_documented_examples() -> None:
    assert {name for name, _ in EXAMPLES} >= {"ELEMENT_WISE_BIT_COUNT", "ELEMENT_WISE_BIT_NOT"}


@pytest.mark.parametrize(("name", "example_id"), EXAMPLES)
def test_documented_examples(name: str, example_id: str) -> None:
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    fields = example.valid_form.as_dict()
    desc = {k: v.to_json() if isinstance(v, ExampleTensor) else v for k, v in fields.items()}
    for value in desc.values():
        if isinstance(value, dict):
            value.pop("Values", None)
    inputs = {
        k: np.array(v.values, dtype=dtype_of(v.data_type or ""))
        for k, v in fields.items()
        if isinstance(v, ExampleTensor) and k != "OutputTensor"
    }
    expected = fields["OutputTensor"]
    assert isinstance(expected, ExampleTensor)
    documented = np.array(expected.values, dtype=dtype_of(expected.data_type or ""))
    result = BACKEND.run({"type": spec.operator_type, "desc": desc}, inputs)["OutputTensor"]
    assert result.shape == documented.shape
    if documented.dtype.kind == "f":
        close(result, documented, documented.dtype)
    else:
        exact(result, documented, documented.dtype)


HARDMAX1_INPUT = [[[12, 0], [-101, 11]], [[3, 234], [0, -101]]]
HARDMAX1_PAGE = [  # the page's examples 1 to 3 (printed as fragments: one input, three outputs)
    ([1], [[[1, 0], [0, 1]], [[1, 1], [0, 0]]]),
    ([0], [[[1, 0], [0, 1]], [[0, 1], [1, 0]]]),
    ([0, 2], [[[0, 0], [0, 1]], [[0, 1], [0, 0]]]),
]


@pytest.mark.parametrize(("axes", "expected"), HARDMAX1_PAGE, ids=str)
def test_hardmax1_page_examples(axes: list[int], expected: list[Any]) -> None:
    desc = {"OutputTensor": tensor("FLOAT32", [2, 2, 2]), "AxisCount": len(axes), "Axes": axes}
    x = np.array(HARDMAX1_INPUT, np.float32)
    exact(run("ACTIVATION_HARDMAX1", desc, InputTensor=x), expected, np.float32)


# ---- every operator runs or says why not -------------------------------------------------


def _inputs(spec: Any, desc: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    inputs = {}
    for field in spec.fields:
        if field.kind == "input_tensor" and desc.get(field.name):
            held = desc[field.name]
            dtype = dtype_of(held["DataType"])
            shape = tuple(held["Sizes"])
            if dtype.kind == "f":
                inputs[field.name] = rng.uniform(0.1, 0.9, shape).astype(dtype)
            else:
                inputs[field.name] = rng.integers(1, 4, shape).astype(dtype)
    return inputs


def test_every_family_operator_is_in_the_table() -> None:
    assert len(FAMILY) == 93
    assert set(FAMILY) == set(ELEMENT_WISE)


@pytest.mark.parametrize("name", FAMILY)
def test_every_operator_runs_or_is_unsupported_with_a_reason(name: str) -> None:
    spec = CATALOG.operator(name)
    rng = np.random.default_rng(7)
    descs = [
        d
        for d in base_descs(CATALOG, spec, limit=8)
        if not d.get("Axes") or max(d["Axes"]) < len(d["InputTensor"]["Sizes"])
    ]
    assert descs
    for desc in descs:
        out_name = "OutputGradientTensor" if "OutputGradientTensor" in desc else "OutputTensor"
        try:
            result = BACKEND.run(
                {"type": spec.operator_type, "desc": desc}, _inputs(spec, desc, rng)
            )[out_name]
        except Unsupported as error:
            assert str(error).strip()
            continue
        assert result.shape == tuple(desc[out_name]["Sizes"])
        assert result.dtype == dtype_of(desc[out_name]["DataType"])


# ---- hand-computed values from the pages' formulas -------------------------------------

X = [-2.0, -0.5, 0.0, 0.25, 1.5]
UNIT = [-0.75, -0.25, 0.0, 0.5, 0.9]
POSITIVE = [0.25, 1.0, 1.5, 3.0, 10.0]

UNARY_FLOAT = [
    ("ELEMENT_WISE_ABS", X, abs),
    ("ELEMENT_WISE_ACOS", UNIT, math.acos),
    ("ELEMENT_WISE_ACOSH", POSITIVE[1:], math.acosh),
    ("ELEMENT_WISE_ASIN", UNIT, math.asin),
    ("ELEMENT_WISE_ASINH", X, math.asinh),
    ("ELEMENT_WISE_ATAN", X, math.atan),
    ("ELEMENT_WISE_ATANH", UNIT, math.atanh),
    ("ELEMENT_WISE_CEIL", X, math.ceil),
    ("ELEMENT_WISE_COS", X, math.cos),
    ("ELEMENT_WISE_COSH", X, math.cosh),
    ("ELEMENT_WISE_ERF", X, math.erf),
    ("ELEMENT_WISE_EXP", X, math.exp),
    ("ELEMENT_WISE_FLOOR", X, math.floor),
    ("ELEMENT_WISE_IDENTITY", X, lambda x: x),
    ("ELEMENT_WISE_LOG", POSITIVE, math.log),
    ("ELEMENT_WISE_NEGATE", X, lambda x: -x),
    ("ELEMENT_WISE_RECIP", POSITIVE, lambda x: 1 / x),
    ("ELEMENT_WISE_SIGN", [*X, -0.0, math.nan], lambda x: (x > 0) - (x < 0)),
    ("ELEMENT_WISE_SIN", X, math.sin),
    ("ELEMENT_WISE_SINH", X, math.sinh),
    ("ELEMENT_WISE_SQRT", POSITIVE, math.sqrt),
    ("ELEMENT_WISE_TAN", X, math.tan),
    ("ELEMENT_WISE_TANH", X, math.tanh),
    ("ACTIVATION_IDENTITY", X, lambda x: x),
    ("ACTIVATION_RELU", X, lambda x: max(0.0, x)),
    ("ACTIVATION_SIGMOID", X, lambda x: 1 / (1 + math.exp(-x))),
    ("ACTIVATION_SOFTSIGN", X, lambda x: x / (1 + abs(x))),
    ("ACTIVATION_TANH", X, math.tanh),
    ("ACTIVATION_GELU", X, lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2)))),
]


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize(
    ("kind", "values", "function"), UNARY_FLOAT, ids=[row[0] for row in UNARY_FLOAT]
)
def test_unary_float_operators(
    kind: str, values: list[float], function: Any, data_type: str
) -> None:
    dtype = dtype_of(data_type)
    x = np.array(values, dtype)
    expected = [function(float(v)) for v in x]
    result = run(kind, out(data_type, len(values)), InputTensor=x)
    close(result, expected, dtype)


ACTIVATIONS = [
    (
        "ACTIVATION_CELU",
        {"Alpha": 0.5},
        lambda x: max(0, x) + min(0, 0.5 * (math.exp(x / 0.5) - 1)),
    ),
    ("ACTIVATION_ELU", {"Alpha": 0.5}, lambda x: x if x >= 0 else 0.5 * (math.exp(x) - 1)),
    (
        "ACTIVATION_HARD_SIGMOID",
        {"Alpha": 0.2, "Beta": 0.5},
        lambda x: max(0, min(0.2 * x + 0.5, 1)),
    ),
    (
        "ACTIVATION_HARD_SWISH",
        {"Alpha": 0.25, "Beta": 0.5},
        lambda x: x * max(0, min(0.25 * x + 0.5, 1)),
    ),
    ("ACTIVATION_LEAKY_RELU", {"Alpha": 0.1}, lambda x: x if x >= 0 else 0.1 * x),
    ("ACTIVATION_LINEAR", {"Alpha": 2.0, "Beta": -1.0}, lambda x: 2 * x - 1),
    (
        "ACTIVATION_PARAMETRIC_SOFTPLUS",
        {"Alpha": 2.0, "Beta": 0.5},
        lambda x: 2 * math.log(1 + math.exp(0.5 * x)),
    ),
    (
        "ACTIVATION_SCALED_ELU",
        {"Alpha": 1.5, "Gamma": 2.0},
        lambda x: 2 * x if x > 0 else 2 * (1.5 * math.exp(x) - 1.5),
    ),
    ("ACTIVATION_SCALED_TANH", {"Alpha": 1.5, "Beta": 0.5}, lambda x: 1.5 * math.tanh(0.5 * x)),
    (
        "ACTIVATION_SHRINK",
        {"Bias": 0.25, "Threshold": 0.4},
        lambda x: x - 0.25 if x > 0.4 else x + 0.25 if x < -0.4 else 0,
    ),
    ("ACTIVATION_SOFTPLUS", {"Steepness": 2.0}, lambda x: math.log(1 + math.exp(2 * x)) / 2),
    ("ACTIVATION_SWISH", {"SigmoidInputScale": 2.0}, lambda x: x / (1 + math.exp(-2 * x))),
    ("ACTIVATION_THRESHOLDED_RELU", {"Alpha": 0.25}, lambda x: x if x > 0.25 else 0),
]


@pytest.mark.parametrize(
    ("kind", "params", "function"), ACTIVATIONS, ids=[row[0] for row in ACTIVATIONS]
)
def test_parameterised_activations(kind: str, params: dict[str, Any], function: Any) -> None:
    result = run(kind, {**out("FLOAT32", len(X)), **params}, InputTensor=f32(*X))
    close(result, [function(x) for x in X])


def test_softmax_family_rows_and_axes() -> None:
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 5.0]], np.float32)
    rows = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    desc = {"OutputTensor": tensor("FLOAT32", [2, 3])}
    close(run("ACTIVATION_SOFTMAX", desc, InputTensor=x), rows)
    close(run("ACTIVATION_LOG_SOFTMAX", desc, InputTensor=x), np.log(rows))
    exact(run("ACTIVATION_HARDMAX", desc, InputTensor=x), [[0, 0, 1], [0, 0, 1]], np.float32)
    everything = np.exp(x) / np.exp(x).sum()
    axes = {**desc, "AxisCount": 2, "Axes": [0, 1]}
    close(run("ACTIVATION_SOFTMAX1", axes, InputTensor=x), everything)
    close(run("ACTIVATION_LOG_SOFTMAX1", axes, InputTensor=x), np.log(everything))
    columns = {**desc, "AxisCount": 1, "Axes": [0]}
    by_column = np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)
    close(run("ACTIVATION_SOFTMAX1", columns, InputTensor=x), by_column)
    exact(run("ACTIVATION_HARDMAX1", axes, InputTensor=x), [[0, 0, 0], [0, 0, 1]], np.float32)


def test_scale_bias_is_applied_to_the_input_first() -> None:
    # f(Scale * x + Bias), from DML_SCALE_BIAS and each page's ScaleBias member.
    scale_bias = {"ScaleBias": {"Scale": 0.5, "Bias": 0.25}}
    desc = {**out("FLOAT32", len(X)), **scale_bias}
    close(run("ELEMENT_WISE_EXP", desc, InputTensor=f32(*X)), [math.exp(0.5 * x + 0.25) for x in X])
    close(run("ELEMENT_WISE_ABS", desc, InputTensor=f32(*X)), [abs(0.5 * x + 0.25) for x in X])
    clip = {**desc, "Min": 0.0, "Max": 0.5}
    close(
        run("ELEMENT_WISE_CLIP", clip, InputTensor=f32(*X)),
        [min(0.5, max(0.0, 0.5 * x + 0.25)) for x in X],
    )
    power = {**desc, "Exponent": 2.0}
    close(
        run("ELEMENT_WISE_CONSTANT_POW", power, InputTensor=f32(*X)),
        [(0.5 * x + 0.25) ** 2 for x in X],
    )
    exponent = f32(2, 2, 2, 3, 3)
    close(
        run("ELEMENT_WISE_POW", desc, InputTensor=f32(*X), ExponentTensor=exponent),
        [(0.5 * x + 0.25) ** e for x, e in zip(X, exponent, strict=True)],
    )
    close(
        run("ELEMENT_WISE_THRESHOLD", {**desc, "Min": 0.1}, InputTensor=f32(*X)),
        [max(0.5 * x + 0.25, 0.1) for x in X],
    )
    threshold = {"Scale": 2.0, "Bias": 0.0}
    exact(
        run(
            "ELEMENT_WISE_IDENTITY",
            {**out("FLOAT16", 3), "ScaleBias": threshold},
            InputTensor=np.array([1, 2, 3], np.float16),
        ),
        [2, 4, 6],
        np.float16,
    )


def test_scale_bias_on_integers_is_unsupported() -> None:
    desc = {**out("INT32", 2), "ScaleBias": {"Scale": 2.0, "Bias": 1.0}}
    with pytest.raises(Unsupported, match="ScaleBias"):
        run("ELEMENT_WISE_ABS", desc, InputTensor=np.array([1, -2], np.int32))


@pytest.mark.parametrize(
    ("activation", "function"),
    [
        ({"Type": "ACTIVATION_RELU"}, lambda v: max(v, 0.0)),
        (
            {"Type": "DML_OPERATOR_ACTIVATION_ELU", "Alpha": 0.5},
            lambda v: v if v >= 0 else 0.5 * (math.exp(v) - 1),
        ),
        ({"Type": "ACTIVATION_LINEAR", "Desc": {"Alpha": 3.0, "Beta": 1.0}}, lambda v: 3 * v + 1),
        ({"Type": "ACTIVATION_SIGMOID"}, lambda v: 1 / (1 + math.exp(-v))),
        ({"Type": "ACTIVATION_LEAKY_RELU", "Alpha": 0.1}, lambda v: v if v >= 0 else 0.1 * v),
    ],
    ids=["relu", "elu", "linear", "sigmoid", "leaky"],
)
def test_fused_activation_applies_to_the_result(activation: dict[str, Any], function: Any) -> None:
    a, b = f32(*X), f32(1.0, -1.0, -0.5, 0.25, 0.0)
    desc = {**out("FLOAT32", len(X)), "FusedActivation": activation}
    expected = [function(float(p) + float(q)) for p, q in zip(a, b, strict=True)]
    close(run("ELEMENT_WISE_ADD1", desc, ATensor=a, BTensor=b), expected)
    half = np.float16
    result = run(
        "ELEMENT_WISE_ADD1",
        {**out("FLOAT16", len(X)), "FusedActivation": activation},
        ATensor=a.astype(half),
        BTensor=b.astype(half),
    )
    close(result, expected, half)


def test_fused_activation_absent_or_null() -> None:
    a, b = f32(1, 2), f32(3, -4)
    for fused in (None, {}):
        desc = {**out("FLOAT32", 2), "FusedActivation": fused}
        close(run("ELEMENT_WISE_ADD1", desc, ATensor=a, BTensor=b), [4, -2])


BINARY_FLOAT = [
    ("ELEMENT_WISE_ADD", lambda a, b: a + b),
    ("ELEMENT_WISE_SUBTRACT", lambda a, b: a - b),
    ("ELEMENT_WISE_MULTIPLY", lambda a, b: a * b),
    ("ELEMENT_WISE_DIVIDE", lambda a, b: a / b),
    ("ELEMENT_WISE_MAX", max),
    ("ELEMENT_WISE_MIN", min),
    ("ELEMENT_WISE_MEAN", lambda a, b: (a + b) / 2),
    ("ELEMENT_WISE_DIFFERENCE_SQUARE", lambda a, b: (a - b) ** 2),
    ("ELEMENT_WISE_ATAN_YX", math.atan2),
    ("ELEMENT_WISE_MODULUS_FLOOR", lambda a, b: a - b * math.floor(a / b)),
    ("ELEMENT_WISE_MODULUS_TRUNCATE", lambda a, b: a - b * math.trunc(a / b)),
]
A = [-7.5, 7.5, -7.5, 7.5, 0.0, 3.0, -1.0]
B = [2.0, 2.0, -2.0, -2.0, 1.0, -4.0, 0.5]


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize(("kind", "function"), BINARY_FLOAT, ids=[row[0] for row in BINARY_FLOAT])
def test_binary_float_operators(kind: str, function: Any, data_type: str) -> None:
    dtype = dtype_of(data_type)
    result = run(
        kind, out(data_type, len(A)), ATensor=np.array(A, dtype), BTensor=np.array(B, dtype)
    )
    close(result, [function(a, b) for a, b in zip(A, B, strict=True)], dtype)


def test_atan_yx_on_the_axes() -> None:
    y, x = f32(1, -1, 0, 0, 1, -1), f32(0, 0, 1, -1, -1, -1)
    close(
        run("ELEMENT_WISE_ATAN_YX", out("FLOAT32", 6), ATensor=y, BTensor=x),
        list(map(math.atan2, y, x)),
    )


def test_integer_arithmetic_wraps_and_truncates() -> None:
    i8 = np.int8
    a, b = np.array([127, -128, -7, 7, 100], i8), np.array([1, -1, 2, -2, 3], i8)
    exact(
        run("ELEMENT_WISE_ADD", out("INT8", 5), ATensor=a, BTensor=b), [-128, 127, -5, 5, 103], i8
    )
    exact(
        run("ELEMENT_WISE_SUBTRACT", out("INT8", 5), ATensor=a, BTensor=b),
        [126, -127, -9, 9, 97],
        i8,
    )
    exact(
        run("ELEMENT_WISE_MULTIPLY", out("INT8", 5), ATensor=a, BTensor=b),
        [127, -128, -14, -14, 44],
        i8,
    )
    # Integer division truncates (the DIVIDE page); INT8_MIN / -1 wraps to INT8_MIN.
    exact(
        run("ELEMENT_WISE_DIVIDE", out("INT8", 5), ATensor=a, BTensor=b),
        [127, -128, -3, -3, 33],
        i8,
    )
    # Floor modulus has the divisor's sign, truncate modulus the dividend's.
    exact(
        run("ELEMENT_WISE_MODULUS_FLOOR", out("INT8", 5), ATensor=a, BTensor=b),
        [0, 0, 1, -1, 1],
        i8,
    )
    exact(
        run("ELEMENT_WISE_MODULUS_TRUNCATE", out("INT8", 5), ATensor=a, BTensor=b),
        [0, 0, -1, 1, 1],
        i8,
    )
    u16 = np.uint16
    a16, b16 = np.array([1, 65535, 7], u16), np.array([2, 1, 2], u16)
    exact(
        run("ELEMENT_WISE_SUBTRACT", out("UINT16", 3), ATensor=a16, BTensor=b16),
        [65535, 65534, 5],
        u16,
    )
    exact(run("ELEMENT_WISE_MAX", out("UINT16", 3), ATensor=a16, BTensor=b16), [2, 65535, 7], u16)
    i64 = np.int64
    big = np.array([-(2**63), 9], i64)
    exact(
        run("ELEMENT_WISE_DIVIDE", out("INT64", 2), ATensor=big, BTensor=np.array([-1, -2], i64)),
        [-(2**63), -4],
        i64,
    )
    i32 = np.int32
    exact(
        run(
            "ELEMENT_WISE_MEAN",
            out("INT32", 3),
            ATensor=np.array([2**31 - 1, -3, 3], i32),
            BTensor=np.array([2**31 - 1, 0, 0], i32),
        ),
        [2**31 - 1, -1, 1],
        i32,
    )
    exact(
        run(
            "ELEMENT_WISE_DIFFERENCE_SQUARE",
            out("UINT32", 2),
            ATensor=np.array([1, 5], np.uint32),
            BTensor=np.array([3, 2], np.uint32),
        ),
        [4, 9],
        np.uint32,
    )
    exact(
        run("ELEMENT_WISE_NEGATE", out("INT8", 2), InputTensor=np.array([-128, 5], i8)),
        [-128, -5],
        i8,
    )
    exact(
        run("ELEMENT_WISE_ABS", out("INT16", 2), InputTensor=np.array([-32768, -5], np.int16)),
        [-32768, 5],
        np.int16,
    )
    exact(
        run("ELEMENT_WISE_SIGN", out("UINT64", 2), InputTensor=np.array([0, 2**64 - 1], np.uint64)),
        [0, 1],
        np.uint64,
    )
    exact(
        run(
            "ELEMENT_WISE_POW",
            out("INT32", 4),
            InputTensor=np.array([-2, 2, 3, 1], i32),
            ExponentTensor=np.array([3, -1, 4, -5], i32),
        ),
        [-8, 0, 81, 1],
        i32,
    )


def test_round_modes() -> None:
    x = f32(0.5, 1.5, 2.5, -0.5, -2.5, 2.4999998, -1.7, 1.7)
    modes = {
        "HALVES_TO_NEAREST_EVEN": [0, 2, 2, 0, -2, 2, -2, 2],
        "DML_ROUNDING_MODE_TOWARD_ZERO": [0, 1, 2, 0, -2, 2, -1, 1],
        "TOWARD_INFINITY": [1, 2, 3, -1, -3, 2, -2, 2],
    }
    for mode, expected in modes.items():
        desc = {**out("FLOAT32", len(x)), "RoundingMode": mode}
        exact(run("ELEMENT_WISE_ROUND", desc, InputTensor=x), expected, np.float32)


def test_is_infinity_is_nan_and_comparisons() -> None:
    x = f32(math.inf, -math.inf, 1.0, math.nan)
    for mode, expected in {
        "EITHER": [1, 1, 0, 0],
        "POSITIVE": [1, 0, 0, 0],
        "DML_IS_INFINITY_MODE_NEGATIVE": [0, 1, 0, 0],
    }.items():
        desc = {**out("UINT8", 4), "InfinityMode": mode}
        exact(run("ELEMENT_WISE_IS_INFINITY", desc, InputTensor=x), expected, np.uint8)
    exact(
        run("ELEMENT_WISE_IS_NAN", out("UINT32", 4), InputTensor=x.astype(np.float16)),
        [0, 0, 0, 1],
        np.uint32,
    )
    a, b = np.array([1, 2, 3], np.uint16), np.array([2, 2, 2], np.uint16)
    for kind, expected in {
        "EQUALS": [0, 1, 0],
        "GREATER_THAN": [0, 0, 1],
        "GREATER_THAN_OR_EQUAL": [0, 1, 1],
        "LESS_THAN": [1, 0, 0],
        "LESS_THAN_OR_EQUAL": [1, 1, 0],
    }.items():
        exact(
            run(f"ELEMENT_WISE_LOGICAL_{kind}", out("UINT8", 3), ATensor=a, BTensor=b),
            expected,
            np.uint8,
        )
    p, q = np.array([0, 0, 2, 5], np.uint32), np.array([0, 7, 0, 1], np.uint32)
    for kind, expected in {"AND": [0, 0, 0, 1], "OR": [0, 1, 1, 1], "XOR": [0, 1, 1, 0]}.items():
        exact(
            run(f"ELEMENT_WISE_LOGICAL_{kind}", out("UINT32", 4), ATensor=p, BTensor=q),
            expected,
            np.uint32,
        )
    exact(
        run(
            "ELEMENT_WISE_LOGICAL_NOT", out("UINT8", 3), InputTensor=np.array([0, 1, 200], np.uint8)
        ),
        [1, 0, 0],
        np.uint8,
    )


def test_bitwise_operators_use_the_native_encoding() -> None:
    a = np.array([1.0, -2.0], np.float32)
    b = np.array([3.0, 0.5], np.float32)
    bits = a.view(np.uint32) & b.view(np.uint32)
    result = run("ELEMENT_WISE_BIT_AND", out("FLOAT32", 2), ATensor=a, BTensor=b)
    exact(result.view(np.uint32), bits, np.uint32)
    i16 = np.array([-1, 0x0F0F], np.int16)
    exact(
        run(
            "ELEMENT_WISE_BIT_XOR",
            out("INT16", 2),
            ATensor=i16,
            BTensor=np.array([0x00FF, 0x00FF], np.int16),
        ),
        [-256, 0x0FF0],
        np.int16,
    )
    exact(
        run(
            "ELEMENT_WISE_BIT_OR",
            out("UINT64", 1),
            ATensor=np.array([2**63], np.uint64),
            BTensor=np.array([1], np.uint64),
        ),
        [2**63 + 1],
        np.uint64,
    )
    exact(
        run("ELEMENT_WISE_BIT_NOT", out("INT8", 2), InputTensor=np.array([0, -1], np.int8)),
        [-1, 0],
        np.int8,
    )
    exact(
        run(
            "ELEMENT_WISE_BIT_COUNT",
            {"OutputTensor": tensor("UINT8", [3])},
            InputTensor=np.array([-1.0, 0.0, 1.0], np.float64),
        ),
        [11, 0, 10],  # -1.0: 0xBFF0..., 1.0: 0x3FF0...
        np.uint8,
    )
    exact(
        run(
            "ELEMENT_WISE_BIT_COUNT",
            out("UINT32", 2),
            InputTensor=np.array([-1, -(2**63)], np.int64),
        ),
        [64, 1],
        np.uint32,
    )
    u8 = np.uint8
    exact(
        run(
            "ELEMENT_WISE_BIT_SHIFT_LEFT",
            out("UINT8", 3),
            ATensor=np.array([1, 3, 255], u8),
            BTensor=np.array([7, 2, 1], u8),
        ),
        [128, 12, 254],
        u8,
    )
    exact(
        run(
            "ELEMENT_WISE_BIT_SHIFT_RIGHT",
            out("UINT8", 3),
            ATensor=np.array([128, 12, 255], u8),
            BTensor=np.array([7, 2, 1], u8),
        ),
        [1, 3, 127],
        u8,
    )


def test_clip_threshold_and_gradients() -> None:
    x = f32(-2, 0, 1, 2, 3)
    u64 = np.uint64
    close(
        run("ELEMENT_WISE_CLIP", {**out("FLOAT32", 5), "Min": 0.0, "Max": 2.0}, InputTensor=x),
        [0, 0, 1, 2, 2],
    )
    clip1 = {
        **out("INT32", 5),
        "MinMaxDataType": "DML_TENSOR_DATA_TYPE_INT32",
        "Min": {"Int32": 0},
        "Max": {"Int32": 2},
    }
    exact(
        run("ELEMENT_WISE_CLIP1", clip1, InputTensor=x.astype(np.int32)), [0, 0, 1, 2, 2], np.int32
    )
    # 64-bit bounds are exact: 2^63 - 1 through a float was 2^63.
    clip1_wide = {**out("UINT64", 3), "MinMaxDataType": "UINT64", "Min": 2**63 - 1, "Max": 2**63}
    exact(
        run("ELEMENT_WISE_CLIP1", clip1_wide, InputTensor=np.array([7, 2**63, 2**64 - 1], u64)),
        [2**63 - 1, 2**63, 2**63],
        u64,
    )
    clip1_plain = {**out("FLOAT32", 5), "MinMaxDataType": "FLOAT32", "Min": 0.5, "Max": 2.5}
    close(run("ELEMENT_WISE_CLIP1", clip1_plain, InputTensor=x), [0.5, 0.5, 1, 2, 2.5])
    exact(
        run(
            "ELEMENT_WISE_THRESHOLD",
            {**out("UINT8", 3), "Min": 2.0},
            InputTensor=np.array([0, 2, 9], np.uint8),
        ),
        [2, 2, 9],
        np.uint8,
    )
    gradient = f32(10, 20, 30, 40, 50)
    grad_desc = {"OutputGradientTensor": tensor("FLOAT32", [5]), "Min": 0.0, "Max": 2.0}
    close(
        run("ELEMENT_WISE_CLIP_GRAD", grad_desc, InputTensor=x, InputGradientTensor=gradient),
        [0, 0, 30, 0, 0],
    )
    grad1 = {
        "OutputGradientTensor": tensor("UINT64", [5]),
        "MinMaxDataType": "UINT64",
        "Min": {"UInt64": 0},
        "Max": {"UInt64": 2},
    }
    # The second: UINT64's largest bound is compared exactly.
    for low, high, x_values, expected in (
        (0, 2, [0, 0, 1, 2, 3], [0, 0, 30, 0, 0]),
        (2**63, 2**64 - 1, [2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1, 0], [0, 20, 30, 0, 0]),
    ):
        bounds = {"Min": {"UInt64": low}, "Max": {"UInt64": high}}
        exact(
            run(
                "ELEMENT_WISE_CLIP_GRAD1",
                {**grad1, **bounds},
                InputTensor=np.array(x_values, u64),
                InputGradientTensor=gradient.astype(u64),
            ),
            expected,
            u64,
        )
    # A bound past an unsigned type's range: x <= -2 never holds, so 0 lies inside (-1.5, 2);
    # saturated to x <= 0 it held at 0.
    for data_type in ("UINT32", "UINT64"):
        dtype = dtype_of(data_type)
        unsigned = {"OutputGradientTensor": tensor(data_type, [5]), "Min": -1.5, "Max": 2.0}
        exact(
            run(
                "ELEMENT_WISE_CLIP_GRAD",
                unsigned,
                InputTensor=np.array([0, 1, 2, 3, 0], dtype),
                InputGradientTensor=gradient.astype(dtype),
            ),
            [10, 20, 0, 0, 50],
            dtype,
        )
    relu_grad = {"OutputGradientTensor": tensor("INT16", [5])}
    exact(
        run(
            "ACTIVATION_RELU_GRAD",
            relu_grad,
            InputTensor=x.astype(np.int16),
            InputGradientTensor=gradient.astype(np.int16),
        ),
        [0, 0, 30, 40, 50],
        np.int16,
    )


def test_if_prelu_relu_and_shrink_on_integers() -> None:
    condition = np.array([1, 0, 7], np.uint8)
    for dtype in (np.float16, np.int16, np.uint16, np.uint64, np.float64):
        a, b = np.array([1, 2, 3], dtype), np.array([4, 5, 6], dtype)
        result = run(
            "ELEMENT_WISE_IF",
            out(np.dtype(dtype).name.upper(), 3),
            ConditionTensor=condition,
            ATensor=a,
            BTensor=b,
        )
        exact(result, [1, 5, 3], dtype)
    i8 = np.int8
    exact(
        run(
            "ACTIVATION_PARAMETERIZED_RELU",
            out("INT8", 3),
            InputTensor=np.array([-3, 0, 4], i8),
            SlopeTensor=np.array([2, 2, 2], i8),
        ),
        [-6, 0, 4],
        i8,
    )
    close(
        run(
            "ACTIVATION_PARAMETERIZED_RELU",
            out("FLOAT32", 2),
            InputTensor=f32(-3, 4),
            SlopeTensor=f32(0.5, 0.5),
        ),
        [-1.5, 4],
    )
    exact(
        run("ACTIVATION_RELU", out("INT16", 3), InputTensor=np.array([-3, 0, 4], np.int16)),
        [0, 0, 4],
        np.int16,
    )
    shrink = {**out("INT32", 4), "Bias": 1.0, "Threshold": 2.0}
    exact(
        run("ACTIVATION_SHRINK", shrink, InputTensor=np.array([-5, -2, 2, 5], np.int32)),
        [-4, 0, 0, 4],
        np.int32,
    )


def test_quantization() -> None:
    x = f32(-1.0, 0.0, 0.5, 1.3, 100.0)
    scale = f32(0.5, 0.5, 0.5, 0.5, 0.5)
    zero = np.array([10, 10, 10, 10, 10], np.uint8)
    # clamp(round(x / scale) + zero_point, 0, 255); 0.5 / 0.5 = 1, 1.3 / 0.5 = 2.6 -> 3.
    exact(
        run(
            "ELEMENT_WISE_QUANTIZE_LINEAR",
            out("UINT8", 5),
            InputTensor=x,
            ScaleTensor=scale,
            ZeroPointTensor=zero,
        ),
        [8, 10, 11, 13, 210],
        np.uint8,
    )
    exact(
        run(
            "ELEMENT_WISE_QUANTIZE_LINEAR",
            out("INT8", 5),
            InputTensor=x,
            ScaleTensor=scale,
            ZeroPointTensor=zero.astype(np.int8),
        ),
        [8, 10, 11, 13, 127],
        np.int8,
    )
    q = np.array([0, 10, 255], np.uint8)
    close(
        run(
            "ELEMENT_WISE_DEQUANTIZE_LINEAR",
            out("FLOAT32", 3),
            InputTensor=q,
            ScaleTensor=scale[:3],
            ZeroPointTensor=zero[:3],
        ),
        [-5, 0, 122.5],
    )
    scales = {name: f32(0.5, 0.5) for name in ("AScaleTensor", "BScaleTensor")}
    result = run(
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
        out("INT8", 2),
        ATensor=np.array([4, 100], np.int8),
        BTensor=np.array([2, 100], np.int8),
        OutputScaleTensor=f32(1.0, 1.0),
        **scales,
    )
    exact(result, [3, 100], np.int8)  # (4 + 2) * 0.5 = 3; 100 stays under 127


def test_cast_within_range() -> None:
    x = f32(-3.75, 0.0, 2.5, 100.0)
    exact(run("CAST", out("INT32", 4), InputTensor=x), [-3, 0, 2, 100], np.int32)
    exact(run("CAST", out("FLOAT16", 4), InputTensor=x), [-3.75, 0, 2.5, 100], np.float16)
    exact(
        run(
            "CAST", out("UINT64", 2), InputTensor=np.array([1, 2**63], np.uint64).astype(np.float64)
        ),
        [1, 2**63],
        np.uint64,
    )
    exact(run("CAST", out("INT8", 2), InputTensor=np.array([300, -1], np.int32)), [44, -1], np.int8)


# ---- the divergences, shown ----------------------------------------------------------------


def test_divergences_name_family_operators() -> None:
    assert set(DIVERGENCES) <= set(FAMILY)
    assert all(reason.strip() for reason in DIVERGENCES.values())


def test_divergence_cast_does_not_saturate() -> None:
    result = run("CAST", out("INT8", 3), InputTensor=f32(300.7, -1.5, math.nan))
    assert result.tolist()[0] == 44  # a saturating cast gives 127
    result = run("CAST", out("UINT8", 1), InputTensor=f32(-1.5))
    assert result.tolist() == [255]  # a saturating cast gives 0


def test_divergence_min_max_clip_propagate_nan() -> None:
    a, b = f32(math.nan, 1.0), f32(1.0, math.nan)
    assert np.isnan(run("ELEMENT_WISE_MAX", out("FLOAT32", 2), ATensor=a, BTensor=b)).all()
    assert np.isnan(run("ELEMENT_WISE_MIN", out("FLOAT32", 2), ATensor=a, BTensor=b)).all()
    clip = {**out("FLOAT32", 1), "Min": 0.0, "Max": 2.0}
    assert np.isnan(run("ELEMENT_WISE_CLIP", clip, InputTensor=f32(math.nan))).all()


def test_divergence_shifts_past_the_width_give_zero() -> None:
    u32 = np.uint32
    a, b = np.array([1, 1], u32), np.array([32, 33], u32)
    exact(run("ELEMENT_WISE_BIT_SHIFT_LEFT", out("UINT32", 2), ATensor=a, BTensor=b), [0, 0], u32)


def test_divergence_integer_division_by_zero_is_by_one() -> None:
    i32 = np.int32
    a, b = np.array([7, -7], i32), np.array([0, 0], i32)
    exact(run("ELEMENT_WISE_DIVIDE", out("INT32", 2), ATensor=a, BTensor=b), [7, -7], i32)
    exact(run("ELEMENT_WISE_MODULUS_FLOOR", out("INT32", 2), ATensor=a, BTensor=b), [0, 0], i32)


def test_divergence_atan_yx_of_infinities() -> None:
    result = run(
        "ELEMENT_WISE_ATAN_YX", out("FLOAT32", 1), ATensor=f32(math.inf), BTensor=f32(math.inf)
    )
    assert np.isnan(result).all()  # atan2(inf, inf) is pi/4


def test_strided_inputs_are_read_through_their_strides() -> None:
    desc = {
        "ATensor": tensor("FLOAT32", [3]),
        "BTensor": {**tensor("FLOAT32", [3]), "Strides": [0]},  # broadcast
        "OutputTensor": tensor("FLOAT32", [3]),
    }
    inputs = {"ATensor": f32(1, 2, 3), "BTensor": f32(10)}
    result = BACKEND.run({"type": "ELEMENT_WISE_ADD", "desc": desc}, inputs)["OutputTensor"]
    close(result, [11, 12, 13])
