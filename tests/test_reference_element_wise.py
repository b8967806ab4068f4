"""The NumPy reference of the element-wise family against the pages: the specs' documented
examples, hand-computed cases for what each page says (the page's sentence is quoted), and
every operator on every data type its support table lists, free of NumPy warnings."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

from dmlspec import load_catalog
from dmlspec.model import ExampleTensor, OperatorSpec, example_field_value
from dmlspec.reference.element_wise import (
    ELEMENT_WISE_OPERATORS,
    UNDEFINED_NOTES,
    element_wise,
)

CATALOG = load_catalog()
FAMILY = sorted(
    spec.name
    for spec in CATALOG.operators
    if spec.name.startswith(("ELEMENT_WISE_", "ACTIVATION_")) or spec.name == "CAST"
)


def dtype_of(data_type: str) -> np.dtype[Any]:
    return np.dtype(CATALOG.common.data_type(data_type).numpy)


def tensor(data_type: str, sizes: tuple[int, ...] | list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def run(name: str, fields: dict[str, Any], **inputs: Any) -> np.ndarray:
    """`name` on `inputs` (arrays, typed by `fields`), its one output."""
    spec = CATALOG.operator(name)
    arrays = {
        field: np.asarray(value, dtype=dtype_of(fields[field]["DataType"]))
        for field, value in inputs.items()
    }
    desc = dict(fields)
    for field, array in arrays.items():
        desc.setdefault(field, tensor(fields[field]["DataType"], array.shape))
    (output,) = element_wise(spec.name, desc, arrays).values()
    return output


def unary(name: str, data_type: str, values: Any, out: str | None = None, **params: Any) -> Any:
    shape = np.shape(values)
    fields = {
        "InputTensor": tensor(data_type, shape),
        "OutputTensor": tensor(out or data_type, shape),
        **params,
    }
    return run(name, fields, InputTensor=values).tolist()


def binary(name: str, data_type: str, a: Any, b: Any, out: str | None = None, **params: Any) -> Any:
    shape = np.shape(a)
    fields = {
        "ATensor": tensor(data_type, shape),
        "BTensor": tensor(data_type, shape),
        "OutputTensor": tensor(out or data_type, shape),
        **params,
    }
    return run(name, fields, ATensor=a, BTensor=b).tolist()


# ---- coverage -----------------------------------------------------------------------------


def test_every_element_wise_activation_and_cast_spec_is_covered() -> None:
    assert len(FAMILY) == 93
    assert sorted(ELEMENT_WISE_OPERATORS) == FAMILY


def test_undefined_notes_name_covered_operators() -> None:
    assert set(UNDEFINED_NOTES) <= ELEMENT_WISE_OPERATORS
    assert all(note.strip() for note in UNDEFINED_NOTES.values())


# ---- the specs' documented examples -------------------------------------------------------


def output_field(spec: OperatorSpec) -> str:
    return next(f.name for f in spec.fields if f.kind == "output_tensor")


def example_cases() -> list[Any]:
    cases = []
    for name in FAMILY:
        spec = CATALOG.operator(name)
        for example in spec.examples:
            output = example.valid_form.as_dict().get(output_field(spec))
            if isinstance(output, ExampleTensor) and output.values is not None:
                # LOG_SOFTMAX1's page prints HARDMAX1's examples: its spec's corrected forms
                # (valid_form) carry the log-softmax of the same input.
                cases.append(pytest.param(name, example.id))
    return cases


def shared_inputs(spec: OperatorSpec) -> dict[str, ExampleTensor]:
    """Inputs printed once for every example ("The following examples all use this same ...
    input tensor"): the first example that gives them."""
    inputs = {f.name for f in spec.fields if f.kind == "input_tensor"}
    for example in spec.examples:
        given = {
            name: value
            for name, value in example.valid_form.as_dict().items()
            if name in inputs and isinstance(value, ExampleTensor) and value.values is not None
        }
        if given:
            return given
    return {}


@pytest.mark.parametrize(("name", "example_id"), example_cases())
def test_documented_examples_give_the_documented_output(name: str, example_id: str) -> None:
    spec = CATALOG.operator(name)
    example = next(e for e in spec.examples if e.id == example_id)
    given = example.valid_form.as_dict()
    tensors = {
        **shared_inputs(spec),
        **{k: v for k, v in given.items() if isinstance(v, ExampleTensor)},
    }
    fields = {f.name: f for f in spec.fields}
    desc: dict[str, Any] = {
        name: example_field_value(fields[name], value)
        for name, value in given.items()
        if not isinstance(value, ExampleTensor | tuple)
    }
    for field, value in tensors.items():
        desc[field] = tensor(value.data_type or "", value.sizes)
    out = output_field(spec)
    inputs = {
        field: np.array(value.values, dtype=dtype_of(value.data_type or ""))
        for field, value in tensors.items()
        if field != out
    }
    expected = np.array(tensors[out].values, dtype=dtype_of(tensors[out].data_type or ""))
    actual = element_wise(name, desc, inputs)[out]
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-6)
    else:
        np.testing.assert_array_equal(actual, expected)


# Examples the pages print that the specs do not (yet) carry.


def test_if_page_example() -> None:
    # ELEMENT_WISE_IF page: [[1, 0], [1, 1]] cond, [[1, 2], [3, 4]] A, [[9, 8], [7, 6]] B
    # -> [[1, 8], [3, 4]].
    fields = {
        "ConditionTensor": tensor("UINT8", [2, 2]),
        "ATensor": tensor("FLOAT32", [2, 2]),
        "BTensor": tensor("FLOAT32", [2, 2]),
        "OutputTensor": tensor("FLOAT32", [2, 2]),
    }
    output = run(
        "ELEMENT_WISE_IF",
        fields,
        ConditionTensor=[[1, 0], [1, 1]],
        ATensor=[[1, 2], [3, 4]],
        BTensor=[[9, 8], [7, 6]],
    )
    assert output.tolist() == [[1, 8], [3, 4]]


def test_hardmax1_page_example_3() -> None:
    x = [[[12, 0], [-101, 11]], [[3, 234], [0, -101]]]
    axes = unary("ACTIVATION_HARDMAX1", "FLOAT32", x, AxisCount=2, Axes=[0, 2])
    assert axes == [[[0, 0], [0, 1]], [[0, 1], [0, 0]]]


# ---- rounding ------------------------------------------------------------------------------

# DML_ROUNDING_MODE page, its table of original values and results.
ROUNDING_TABLE = {
    "HALVES_TO_NEAREST_EVEN": [-2, -2, -2, -1, 0, 1, 2, 2, 2],
    "TOWARD_ZERO": [-2, -1, -1, -1, 0, 1, 1, 1, 2],
    "TOWARD_INFINITY": [-3, -2, -2, -1, 0, 1, 2, 2, 3],
}


@pytest.mark.parametrize("mode", sorted(ROUNDING_TABLE))
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_round_follows_the_rounding_mode_table(mode: str, data_type: str) -> None:
    original = [-2.5, -1.75, -1.5, -1.25, 0, 1.25, 1.5, 1.75, 2.5]
    for spelled in (mode, f"DML_ROUNDING_MODE_{mode}"):
        rounded = unary("ELEMENT_WISE_ROUND", data_type, original, RoundingMode=spelled)
        assert rounded == ROUNDING_TABLE[mode]


def test_round_toward_infinity_keeps_large_integers() -> None:
    # 2^52 + 1 is an integer already: x + 0.5 would round it up to 2^52 + 2 in float64.
    big = float(2**23 + 1)
    assert unary("ELEMENT_WISE_ROUND", "FLOAT32", [big, -big], RoundingMode="TOWARD_INFINITY") == [
        big,
        -big,
    ]


# ---- integer semantics ----------------------------------------------------------------------


def test_integer_divide_truncates() -> None:
    # DIVIDE page: "For integer divisions, the result is truncated."
    assert binary("ELEMENT_WISE_DIVIDE", "INT32", [7, -7, 7, -7], [2, 2, -2, -2]) == [3, -3, -3, 3]
    assert binary("ELEMENT_WISE_DIVIDE", "UINT8", [255, 7], [2, 8]) == [127, 0]


def test_integer_divide_by_zero_is_crash_free() -> None:
    # The page is silent (UNDEFINED_NOTES): any value; the reference writes 0.
    assert binary("ELEMENT_WISE_DIVIDE", "INT8", [5, -128], [0, -1]) == [0, -128]
    assert "ELEMENT_WISE_DIVIDE" in UNDEFINED_NOTES


def test_modulus_floor_takes_the_divisors_sign() -> None:
    # MODULUS_FLOOR page: "Because the quotient is rounded towards -inf, the result will have
    # the same sign as the divisor."  f(a, b) = a - (b * floor(a / b))
    assert binary("ELEMENT_WISE_MODULUS_FLOOR", "INT16", [7, -7, 7, -7], [3, 3, -3, -3]) == [
        1,
        2,
        -2,
        -1,
    ]
    assert binary("ELEMENT_WISE_MODULUS_FLOOR", "FLOAT32", [7.5, -7.5], [2, 2]) == [1.5, 0.5]


def test_modulus_truncate_takes_the_dividends_sign() -> None:
    # MODULUS_TRUNCATE page: "Because the quotient is rounded towards 0, the result will have
    # the same sign as the dividend."  f(a, b) = a - (b * trunc(a / b))
    assert binary("ELEMENT_WISE_MODULUS_TRUNCATE", "INT64", [7, -7, 7, -7], [3, 3, -3, -3]) == [
        1,
        -1,
        1,
        -1,
    ]
    assert binary("ELEMENT_WISE_MODULUS_TRUNCATE", "FLOAT32", [7.5, -7.5], [2, 2]) == [1.5, -1.5]
    assert binary("ELEMENT_WISE_MODULUS_TRUNCATE", "INT8", [5, -128], [0, -1]) == [0, 0]


def test_add_and_multiply_wrap_on_overflow() -> None:
    # The pages give f(a, b) = a + b / a * b and no overflow rule; the reference wraps.
    assert binary("ELEMENT_WISE_ADD", "INT8", [127, -128], [1, -1]) == [-128, 127]
    assert binary("ELEMENT_WISE_ADD", "UINT64", [2**64 - 1], [2]) == [1]
    assert binary("ELEMENT_WISE_SUBTRACT", "UINT32", [0], [1]) == [2**32 - 1]
    assert binary("ELEMENT_WISE_MULTIPLY", "INT64", [2**62], [4]) == [0]
    assert binary("ELEMENT_WISE_MULTIPLY", "UINT16", [300], [300]) == [90000 % 2**16]
    # (a - b) * (a - b) modulo 2^32 is the same however the device orders the wrapping.
    assert binary("ELEMENT_WISE_DIFFERENCE_SQUARE", "UINT32", [0], [3]) == [9]


def test_int64_arithmetic_is_exact() -> None:
    big = 2**62 + 1  # not a float64
    assert binary("ELEMENT_WISE_ADD", "INT64", [big], [2]) == [big + 2]
    assert binary("ELEMENT_WISE_MAX", "UINT64", [2**64 - 1], [2**64 - 2]) == [2**64 - 1]


def test_abs_and_negate_of_int_min_wrap() -> None:
    # ABS: f(x) = abs(x); NEGATE: f(x) = -x; -INT_MIN has no value in the type.
    assert unary("ELEMENT_WISE_ABS", "INT8", [-128, -5, 5]) == [-128, 5, 5]
    assert unary("ELEMENT_WISE_NEGATE", "INT32", [-(2**31), 7]) == [-(2**31), -7]


def test_sign() -> None:
    # SIGN page: -1 if x < 0, 1 if x > 0, 0 otherwise "// This includes negative zero."
    assert unary("ELEMENT_WISE_SIGN", "FLOAT32", [-3.5, 0.0, -0.0, 2.0, math.nan]) == [
        -1,
        0,
        0,
        1,
        0,
    ]
    assert unary("ELEMENT_WISE_SIGN", "INT8", [-128, 0, 127]) == [-1, 0, 1]
    assert unary("ELEMENT_WISE_SIGN", "UINT8", [0, 255]) == [0, 1]


def test_mean_of_integers_truncates_the_exact_sum() -> None:
    # MEAN page: f(a, b) = (a + b) / 2 (integer rounding undefined: UNDEFINED_NOTES).
    assert binary("ELEMENT_WISE_MEAN", "INT32", [3, -3, 2**31 - 1], [0, 0, 2**31 - 1]) == [
        1,
        -1,
        2**31 - 1,
    ]
    assert binary("ELEMENT_WISE_MEAN", "FLOAT32", [3], [0]) == [1.5]


def test_bit_shifts() -> None:
    # "Performs a logical left shift ... f(a, b) = (a << b)"; counts >= the width write 0
    # (undefined on the page: UNDEFINED_NOTES).
    left = binary("ELEMENT_WISE_BIT_SHIFT_LEFT", "UINT8", [1, 1, 255, 3], [7, 8, 200, 1])
    assert left == [128, 0, 0, 6]
    right = binary("ELEMENT_WISE_BIT_SHIFT_RIGHT", "UINT32", [2**31, 5, 5], [31, 32, 1])
    assert right == [1, 0, 2]
    big = binary("ELEMENT_WISE_BIT_SHIFT_LEFT", "UINT64", [1, 1], [63, 2**63])
    assert big == [2**63, 0]


def test_bit_operators_read_the_native_encoding() -> None:
    # "The bitwise operation is applied to tensor data in its native encoding."
    assert unary("ELEMENT_WISE_BIT_NOT", "INT8", [0, -1, 5]) == [-1, 0, -6]
    assert unary("ELEMENT_WISE_BIT_COUNT", "FLOAT32", [1.0, -0.0, 0.0], out="UINT8") == [7, 1, 0]
    assert unary("ELEMENT_WISE_BIT_COUNT", "INT64", [-1], out="UINT32") == [64]
    # -0.0 XOR 0.0 keeps the sign bit; 1.0 AND -1.0 is 1.0.
    assert binary("ELEMENT_WISE_BIT_XOR", "FLOAT32", [-0.0], [0.0]) == [-0.0]
    assert math.copysign(1, binary("ELEMENT_WISE_BIT_XOR", "FLOAT32", [-0.0], [0.0])[0]) == -1
    assert binary("ELEMENT_WISE_BIT_AND", "FLOAT16", [1.0], [-1.0]) == [1.0]
    assert binary("ELEMENT_WISE_BIT_OR", "UINT16", [0xF0F0], [0x0F0F]) == [0xFFFF]


def test_pow_of_integers_is_exact() -> None:
    # POW page: "When the input tensor and exponent tensor both have integral data type, this
    # operator guarantees exact results."
    fields = {
        "InputTensor": tensor("INT64", [4]),
        "ExponentTensor": tensor("INT64", [4]),
        "OutputTensor": tensor("INT64", [4]),
    }
    output = run(
        "ELEMENT_WISE_POW", fields, InputTensor=[3, -3, 7, -1], ExponentTensor=[39, 3, 0, -3]
    )
    assert output.tolist() == [3**39, -27, 1, -1]


def test_pow_of_negative_bases() -> None:
    # "Negative bases are supported for exponents with integral values (though datatype can
    # still be float), otherwise this operator returns NaN."
    fields = {
        "InputTensor": tensor("FLOAT32", [2]),
        "ExponentTensor": tensor("FLOAT32", [2]),
        "OutputTensor": tensor("FLOAT32", [2]),
    }
    output = run("ELEMENT_WISE_POW", fields, InputTensor=[-2, -2], ExponentTensor=[3, 0.5])
    assert output[0] == -8 and math.isnan(output[1])
    assert unary("ELEMENT_WISE_CONSTANT_POW", "FLOAT32", [-2.0, 4.0], Exponent=2)[:2] == [4, 16]
    assert math.isnan(unary("ELEMENT_WISE_CONSTANT_POW", "FLOAT32", [-2.0], Exponent=0.5)[0])


# ---- comparisons, logic, tests --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ELEMENT_WISE_LOGICAL_EQUALS", [0, 1, 0, 0]),
        ("ELEMENT_WISE_LOGICAL_GREATER_THAN", [0, 0, 1, 0]),
        ("ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", [0, 1, 1, 0]),
        ("ELEMENT_WISE_LOGICAL_LESS_THAN", [1, 0, 0, 0]),
        ("ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL", [1, 1, 0, 0]),
    ],
)
def test_comparisons_write_one_or_zero(name: str, expected: list[int]) -> None:
    # "placing the result (1 for true, 0 for false)"; NaN compares false.
    a, b = [1.0, 2.0, 3.0, math.nan], [2.0, 2.0, 2.0, math.nan]
    assert binary(name, "FLOAT32", a, b, out="UINT8") == expected
    assert binary(name, "INT64", [1, 2, 3, -(2**63)], [2, 2, 2, 2**63 - 1], out="UINT32") == (
        [*expected[:3], int(name.endswith(("LESS_THAN", "LESS_THAN_OR_EQUAL")))]
    )


def test_logical_operators() -> None:
    a, b = [0, 0, 7, 7], [0, 3, 0, 3]
    assert binary("ELEMENT_WISE_LOGICAL_AND", "UINT8", a, b) == [0, 0, 0, 1]
    assert binary("ELEMENT_WISE_LOGICAL_OR", "UINT32", a, b) == [0, 1, 1, 1]
    assert binary("ELEMENT_WISE_LOGICAL_XOR", "UINT8", a, b) == [0, 1, 1, 0]
    assert unary("ELEMENT_WISE_LOGICAL_NOT", "UINT8", [0, 1, 255]) == [1, 0, 0]


def test_is_nan_and_is_infinity() -> None:
    values = [math.inf, -math.inf, math.nan, 1.0]
    assert unary("ELEMENT_WISE_IS_NAN", "FLOAT16", values, out="UINT8") == [0, 0, 1, 0]
    modes = {"EITHER": [1, 1, 0, 0], "POSITIVE": [1, 0, 0, 0], "NEGATIVE": [0, 1, 0, 0]}
    for mode, expected in modes.items():
        for spelled in (mode, f"DML_IS_INFINITY_MODE_{mode}"):
            got = unary(
                "ELEMENT_WISE_IS_INFINITY", "FLOAT32", values, out="UINT8", InfinityMode=spelled
            )
            assert got == expected


# ---- clip, threshold, gradients -------------------------------------------------------------


def test_clip_and_clip1_follow_their_own_formulas() -> None:
    # CLIP: f(x) = min(Max, max(Min, x)); CLIP1: f(x) = max(Min, min(x, Max)). They differ
    # only when Min > Max.
    x = [-5.0, 0.5, 5.0]
    assert unary("ELEMENT_WISE_CLIP", "FLOAT32", x, Min=-1, Max=1) == [-1, 0.5, 1]
    assert unary("ELEMENT_WISE_CLIP", "FLOAT32", x, Min=1, Max=-1) == [-1, -1, -1]
    clip1 = {"MinMaxDataType": "FLOAT32", "Min": {"Float32": 1}, "Max": {"Float32": -1}}
    assert unary("ELEMENT_WISE_CLIP1", "FLOAT32", x, **clip1) == [1, 1, 1]


def test_clip1_reads_its_scalar_unions_as_min_max_data_type() -> None:
    x = [-(2**63), 0, 2**63 - 1]
    ints = {
        "MinMaxDataType": "DML_TENSOR_DATA_TYPE_INT64",
        "Min": {"Int64": -(2**62)},
        "Max": 2**62,
    }
    assert unary("ELEMENT_WISE_CLIP1", "INT64", x, **ints) == [-(2**62), 0, 2**62]
    halves = {"MinMaxDataType": "FLOAT16", "Min": 0.1, "Max": {"Bytes": [0x00, 0x3C, 0, 0]}}
    assert unary("ELEMENT_WISE_CLIP1", "FLOAT16", [-1.0, 2.0], **halves) == [
        float(np.float16(0.1)),
        1.0,
    ]


def test_clip_grad() -> None:
    # "If x is at or below this value [Min], then the gradient result is 0" (and at or above Max).
    fields = {
        "InputTensor": tensor("INT32", [4]),
        "InputGradientTensor": tensor("INT32", [4]),
        "OutputGradientTensor": tensor("INT32", [4]),
    }
    for name, bounds in (
        ("ELEMENT_WISE_CLIP_GRAD", {"Min": 0, "Max": 10}),
        ("ELEMENT_WISE_CLIP_GRAD1", {"MinMaxDataType": "INT32", "Min": {"Int32": 0}, "Max": 10}),
    ):
        output = run(
            name, {**fields, **bounds}, InputTensor=[0, 1, 9, 10], InputGradientTensor=[5, 6, 7, 8]
        )
        assert output.tolist() == [0, 6, 7, 0]


def test_threshold_and_relu_grad() -> None:
    # THRESHOLD: f(x) = max(x, Min); RELU_GRAD: OutputGradientTensor = (X > 0 ? dY : 0).
    assert unary("ELEMENT_WISE_THRESHOLD", "INT8", [-5, 3], Min=-2) == [-2, 3]
    assert unary("ELEMENT_WISE_THRESHOLD", "FLOAT32", [-5, 3], Min=-2.5) == [-2.5, 3]
    fields = {
        "InputTensor": tensor("INT8", [3]),
        "InputGradientTensor": tensor("INT8", [3]),
        "OutputGradientTensor": tensor("INT8", [3]),
    }
    output = run(
        "ACTIVATION_RELU_GRAD", fields, InputTensor=[-1, 0, 1], InputGradientTensor=[4, 5, 6]
    )
    assert output.tolist() == [0, 0, 6]


# ---- ScaleBias and FusedActivation ----------------------------------------------------------


def test_scale_bias_applies_before_the_function() -> None:
    # "If present, this has the effect of applying the function g(x) = x * scale + bias to each
    # input element prior to computing this operator."
    scale_bias = {"Scale": 2.0, "Bias": -1.0}
    assert unary("ELEMENT_WISE_IDENTITY", "FLOAT32", [0, 1, 2], ScaleBias=scale_bias) == [-1, 1, 3]
    assert unary("ELEMENT_WISE_ABS", "FLOAT32", [0, 1], ScaleBias=scale_bias) == [1, 1]
    assert unary("ELEMENT_WISE_SQRT", "FLOAT32", [5], ScaleBias={"Scale": 3, "Bias": 1}) == [4]
    assert unary("ELEMENT_WISE_EXP", "FLOAT32", [1], ScaleBias=None) == [pytest.approx(math.e)]
    # POW: the input only, not the exponent.
    fields = {
        "InputTensor": tensor("FLOAT32", [1]),
        "ExponentTensor": tensor("FLOAT32", [1]),
        "OutputTensor": tensor("FLOAT32", [1]),
        "ScaleBias": {"Scale": 1, "Bias": 1},
    }
    assert run("ELEMENT_WISE_POW", fields, InputTensor=[2], ExponentTensor=[2]).tolist() == [9]


def test_scale_and_bias_are_float32() -> None:
    # DML_SCALE_BIAS: FLOAT Scale, FLOAT Bias.
    got = unary("ELEMENT_WISE_IDENTITY", "FLOAT64", [1.0], ScaleBias={"Scale": 0.1, "Bias": 0})
    assert got == [float(np.float32(0.1))]


@pytest.mark.parametrize("nested", [False, True])
def test_fused_activation_applies_the_activation_formula(nested: bool) -> None:
    # ADD1 page: f(a, b) = FusedActivation(a + b)
    params = {"Alpha": 0.5}
    fused = {"Type": "DML_OPERATOR_ACTIVATION_ELU", **({"Desc": params} if nested else params)}
    got = binary("ELEMENT_WISE_ADD1", "FLOAT32", [1, -1, 0], [1, -2, 0], FusedActivation=fused)
    assert got == pytest.approx([2, 0.5 * math.expm1(-3), 0])
    relu = {"Type": "ACTIVATION_RELU"}
    assert binary("ELEMENT_WISE_ADD1", "FLOAT16", [1, -1], [1, -2], FusedActivation=relu) == [2, 0]
    clip = {"Type": "ELEMENT_WISE_CLIP", "Min": 0, "Max": 1}
    assert binary("ELEMENT_WISE_ADD1", "FLOAT32", [1, -1], [1, -2], FusedActivation=clip) == [1, 0]


def test_fused_activation_rounds_once() -> None:
    # 2048 + 1 is no float16 (it ties to 2048); fused, the activation sees the exact 2049.
    linear = {"Type": "ACTIVATION_LINEAR", "Alpha": 1.0, "Beta": -2048.0}
    got = binary("ELEMENT_WISE_ADD1", "FLOAT16", [2048], [1], FusedActivation=linear)
    assert got == [1.0]


# ---- float rounding ----------------------------------------------------------------------


def test_floats_are_computed_wide_and_rounded_once() -> None:
    # (a + b) / 2 of the largest float16 overflows nowhere before the single rounding.
    assert binary("ELEMENT_WISE_MEAN", "FLOAT16", [65504], [65504]) == [65504]
    assert binary("ELEMENT_WISE_ADD", "FLOAT16", [65504], [65504]) == [math.inf]


# ---- activations ------------------------------------------------------------------------


def test_activation_formulas_on_hand_values() -> None:
    x = [-2.0, 0.0, 3.0]
    e = math.exp
    expected = {
        "ACTIVATION_CELU": ({"Alpha": 2.0}, [2 * (e(-1) - 1), 0, 3]),
        "ACTIVATION_ELU": ({"Alpha": 0.5}, [0.5 * (e(-2) - 1), 0, 3]),
        "ACTIVATION_GELU": (
            {},
            [
                -2 * 0.5 * (1 + math.erf(-2 / math.sqrt(2))),
                0,
                3 * 0.5 * (1 + math.erf(3 / math.sqrt(2))),
            ],
        ),
        "ACTIVATION_HARD_SIGMOID": ({"Alpha": 0.25, "Beta": 0.5}, [0, 0.5, 1]),
        "ACTIVATION_HARD_SWISH": ({"Alpha": 0.25, "Beta": 0.5}, [-0.0, 0, 3]),
        "ACTIVATION_IDENTITY": ({}, x),
        "ACTIVATION_LEAKY_RELU": ({"Alpha": 0.1}, [-0.2, 0, 3]),
        "ACTIVATION_LINEAR": ({"Alpha": 2.0, "Beta": 1.0}, [-3, 1, 7]),
        "ACTIVATION_PARAMETRIC_SOFTPLUS": (
            {"Alpha": 2.0, "Beta": 1.0},
            [2 * math.log1p(e(-2)), 2 * math.log(2), 2 * math.log1p(e(3))],
        ),
        "ACTIVATION_RELU": ({}, [0, 0, 3]),
        "ACTIVATION_SCALED_ELU": ({"Alpha": 1.5, "Gamma": 2.0}, [2 * (1.5 * e(-2) - 1.5), 0, 6]),
        "ACTIVATION_SCALED_TANH": (
            {"Alpha": 2.0, "Beta": 0.5},
            [2 * math.tanh(-1), 0, 2 * math.tanh(1.5)],
        ),
        "ACTIVATION_SHRINK": ({"Bias": 0.5, "Threshold": 1.0}, [-1.5, 0, 2.5]),
        "ACTIVATION_SIGMOID": ({}, [1 / (1 + e(2)), 0.5, 1 / (1 + e(-3))]),
        "ACTIVATION_SOFTPLUS": (
            {"Steepness": 2.0},
            [math.log1p(e(-4)) / 2, math.log(2) / 2, math.log1p(e(6)) / 2],
        ),
        "ACTIVATION_SOFTSIGN": ({}, [-2 / 3, 0, 0.75]),
        "ACTIVATION_SWISH": ({"SigmoidInputScale": 0.5}, [-2 / (1 + e(1)), 0, 3 / (1 + e(-1.5))]),
        "ACTIVATION_TANH": ({}, [math.tanh(-2), 0, math.tanh(3)]),
        "ACTIVATION_THRESHOLDED_RELU": ({"Alpha": 2.5}, [0, 0, 3]),
    }
    for name, (params, values) in expected.items():
        got = unary(name, "FLOAT32", x, **params)
        assert got == pytest.approx(values, rel=1e-6, abs=1e-7), name


def test_softmax_family_reduces_the_last_axis_or_the_given_axes() -> None:
    x = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    soft = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        np.array(unary("ACTIVATION_SOFTMAX", "FLOAT32", x.tolist())), soft, rtol=1e-6
    )
    got = np.array(unary("ACTIVATION_LOG_SOFTMAX", "FLOAT32", x.tolist()))
    np.testing.assert_allclose(got, np.log(soft), rtol=1e-6)
    # *1 with Axes == {DimensionCount - 1} equals the original ("This operator is equivalent
    # to ... when AxisCount == 1, and Axes == {DimensionCount - 1}").
    for name in ("SOFTMAX", "LOG_SOFTMAX", "HARDMAX"):
        original = unary(f"ACTIVATION_{name}", "FLOAT32", x.tolist())
        assert (
            unary(f"ACTIVATION_{name}1", "FLOAT32", x.tolist(), AxisCount=1, Axes=[1]) == original
        )
    every = np.array(unary("ACTIVATION_SOFTMAX1", "FLOAT32", x.tolist(), AxisCount=2, Axes=[0, 1]))
    np.testing.assert_allclose(every, np.exp(x) / np.exp(x).sum(), rtol=1e-6)
    # "1 for the first occurrence of the largest value in the layer"
    assert unary("ACTIVATION_HARDMAX", "FLOAT32", [[1, 3, 3], [2, 2, 2]]) == [[0, 1, 0], [1, 0, 0]]
    assert unary("ACTIVATION_SOFTMAX", "FLOAT32", [[1000.0, 1000.0]]) == [[0.5, 0.5]]


def test_parameterized_relu_takes_the_slope_tensor() -> None:
    fields = {
        "InputTensor": tensor("INT8", [3]),
        "SlopeTensor": tensor("INT8", [3]),
        "OutputTensor": tensor("INT8", [3]),
    }
    output = run(
        "ACTIVATION_PARAMETERIZED_RELU", fields, InputTensor=[-3, 4, -128], SlopeTensor=[2, 9, -1]
    )
    assert output.tolist() == [-6, 4, -128]


def test_integer_relu_and_shrink() -> None:
    assert unary("ACTIVATION_RELU", "INT32", [-(2**31), 0, 5]) == [0, 0, 5]
    # f(x) = x - Bias if x > Threshold; x + Bias if x < -Threshold; else 0 (toward zero).
    assert unary("ACTIVATION_SHRINK", "INT16", [-5, 0, 5], Bias=1.5, Threshold=1) == [-3, 0, 3]
    assert unary("ACTIVATION_SHRINK", "UINT8", [1, 200], Bias=2, Threshold=0) == [0, 198]


# ---- quantization -----------------------------------------------------------------------


def test_quantize_linear_rounds_and_saturates() -> None:
    # "clamp(round(input / scale) + zero_point, Min, Max)"; "For uint8 output, Min = 0, Max =
    # 255"; "For int8 output, Min = -128, Max = 127". Ties: to even (UNDEFINED_NOTES).
    fields = {
        "InputTensor": tensor("FLOAT32", [5]),
        "ScaleTensor": tensor("FLOAT32", [5]),
        "ZeroPointTensor": tensor("INT8", [5]),
        "OutputTensor": tensor("INT8", [5]),
    }
    output = run(
        "ELEMENT_WISE_QUANTIZE_LINEAR",
        fields,
        InputTensor=[1.0, 5.0, -1000, 1000, 3.0],
        ScaleTensor=[0.5, 2.0, 1, 1, 2.0],
        ZeroPointTensor=[1, 0, 0, 0, 0],
    )
    assert output.tolist() == [3, 2, -128, 127, 2]
    absent = {k: v for k, v in fields.items() if k != "ZeroPointTensor"}
    absent["OutputTensor"] = tensor("UINT8", [2])
    absent["InputTensor"] = tensor("INT32", [2])
    absent["ScaleTensor"] = tensor("FLOAT32", [2])
    assert run(
        "ELEMENT_WISE_QUANTIZE_LINEAR", absent, InputTensor=[-3, 7], ScaleTensor=[1, 2]
    ).tolist() == [0, 4]


def test_dequantize_linear() -> None:
    # f(input, scale, zero_point) = (input - zero_point) * scale
    fields = {
        "InputTensor": tensor("UINT8", [3]),
        "ScaleTensor": tensor("FLOAT32", [3]),
        "ZeroPointTensor": tensor("UINT8", [3]),
        "OutputTensor": tensor("FLOAT32", [3]),
    }
    output = run(
        "ELEMENT_WISE_DEQUANTIZE_LINEAR",
        fields,
        InputTensor=[0, 128, 255],
        ScaleTensor=[0.5, 0.5, 0.25],
        ZeroPointTensor=[128, 128, 0],
    )
    assert output.tolist() == [-64, 0, 63.75]


def test_quantized_linear_add() -> None:
    # AValue = (A - AZeroPoint) * AScale; ... clamp(round(OutputValue / OutputScale) +
    # OutputZeroPoint, Min, Max); absent zero points default to 0.
    one = [1, 1]
    fields = {
        "ATensor": tensor("UINT8", [1, 3]),
        "AScaleTensor": tensor("FLOAT32", one),
        "AZeroPointTensor": tensor("UINT8", one),
        "BTensor": tensor("UINT8", [1, 3]),
        "BScaleTensor": tensor("FLOAT32", one),
        "OutputScaleTensor": tensor("FLOAT32", one),
        "OutputZeroPointTensor": tensor("UINT8", one),
        "OutputTensor": tensor("UINT8", [1, 3]),
    }
    output = run(
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
        fields,
        ATensor=[[10, 20, 255]],
        AScaleTensor=[[0.5]],
        AZeroPointTensor=[[10]],
        BTensor=[[4, 1, 255]],
        BScaleTensor=[[2.0]],
        OutputScaleTensor=[[1.0]],
        OutputZeroPointTensor=[[100]],
    )
    # (0 + 8) + 100, (5 + 2) + 100, (122.5 + 510) + 100 -> saturates at 255
    assert output.tolist() == [[108, 107, 255]]


# ---- CAST -------------------------------------------------------------------------------


def test_cast_float_to_integer_truncates_and_saturates() -> None:
    # The page is silent (UNDEFINED_NOTES): toward zero, saturating, NaN -> 0.
    values = [math.nan, 300.0, -300.0, -1.9, 1.9, math.inf, -math.inf]
    assert unary("CAST", "FLOAT32", values, out="INT8") == [0, 127, -128, -1, 1, 127, -128]
    assert unary("CAST", "FLOAT32", [-1.0, 1e30], out="UINT64") == [0, 2**64 - 1]
    assert unary("CAST", "FLOAT64", [2.0**63, -(2.0**63)], out="INT64") == [2**63 - 1, -(2**63)]
    assert "CAST" in UNDEFINED_NOTES


def test_cast_between_integers_wraps() -> None:
    assert unary("CAST", "INT32", [300, -1, 127], out="INT8") == [44, -1, 127]
    assert unary("CAST", "INT8", [-1], out="UINT64") == [2**64 - 1]


def test_cast_to_floats_rounds_to_nearest_even() -> None:
    assert unary("CAST", "INT32", [2049, 2051, 70000], out="FLOAT16") == [2048, 2052, math.inf]
    assert unary("CAST", "UINT64", [2**64 - 1], out="FLOAT32") == [2.0**64]
    assert unary("CAST", "INT64", [2**24 + 1], out="FLOAT32") == [2.0**24]
    assert unary("CAST", "FLOAT64", [1 + 2**-11 + 2**-40], out="FLOAT16") == [1 + 2**-10]
    assert unary("CAST", "FLOAT16", [65504.0], out="FLOAT32") == [65504.0]


# ---- every operator, every listed data type, no warnings ----------------------------------


def default_params(spec: OperatorSpec, output_type: str, rank: int) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for field in spec.fields:
        if field.kind == "float":
            params[field.name] = 1.5
        elif field.kind == "enum" and field.enum is not None:
            enum = next(e for e in CATALOG.common.enums if e.name == field.enum)
            params[field.name] = enum.members[-1].name
        elif field.kind == "data_type":
            params[field.name] = output_type
        elif field.kind == "scalar_union":
            params[field.name] = -1 if field.name == "Min" else 3
        elif field.kind == "uint":
            params[field.name] = 1
        elif field.kind == "uint_array":
            params[field.name] = [rank - 1]
        elif field.kind == "scale_bias":
            params[field.name] = {"Scale": 0.5, "Bias": 1.0}
    return params


def random_values(
    dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    if dtype.kind == "f":
        values = rng.normal(scale=4, size=shape)
        values.flat[:4] = [math.nan, math.inf, -math.inf, 0.0][: values.size]
        return values.astype(dtype)
    info = np.iinfo(dtype)
    values = rng.integers(int(info.min), int(info.max), size=shape, dtype=dtype, endpoint=True)
    values.flat[:3] = [info.min, info.max, 0][: values.size]
    return values


def typed_cases() -> list[tuple[str, str, bool]]:
    """Each operator with each output type its last support row lists; again with a
    ScaleBias where the operator has one."""
    cases = []
    for name in FAMILY:
        spec = CATALOG.operator(name)
        has_scale_bias = any(f.kind == "scale_bias" for f in spec.fields)
        for data_type in spec.support[-1].tensor(output_field(spec)).data_types:
            cases.append((name, data_type, False))
            if has_scale_bias:
                cases.append((name, data_type, True))
    return cases


@pytest.mark.parametrize(("name", "output_type", "scale_bias"), typed_cases())
def test_every_listed_type_runs_without_warnings(
    name: str, output_type: str, scale_bias: bool
) -> None:
    spec = CATALOG.operator(name)
    row = spec.support[-1]
    out = output_field(spec)
    rng = np.random.default_rng(7)
    shape = (2, 3, 4)
    desc: dict[str, Any] = default_params(spec, output_type, len(shape))
    if not scale_bias:
        desc.pop("ScaleBias", None)
    inputs = {}
    for field in spec.fields:
        if field.kind not in ("input_tensor", "output_tensor"):
            continue
        types = row.tensor(field.name).data_types
        data_type = output_type if output_type in types else types[0]
        sizes = shape
        if name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD" and "Scale" in field.name:
            sizes = (1, 1, 1)
        desc[field.name] = tensor(data_type, sizes)
        if field.kind == "input_tensor":
            inputs[field.name] = random_values(dtype_of(data_type), sizes, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = element_wise(name, desc, inputs)
    assert list(result) == [out]
    assert result[out].dtype == dtype_of(output_type)
    assert result[out].shape == shape
