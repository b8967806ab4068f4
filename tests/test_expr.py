"""The constraint-expression language: what it rejects, how it types and evaluates."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dmlspec.expr import (
    EnumInfo,
    Environment,
    ExpressionError,
    Scope,
    TensorValue,
    compile_expression,
)
from dmlspec.expr.functions import FUNCTIONS
from dmlspec.expr.scalars import scalar_union_value
from dmlspec.expr.types import ARRAY, BOOL, INT, LIST, NUMBER, EnumType, TensorType
from dmlspec.model import Catalog

TENSOR = TensorType((("Sizes", LIST), ("DimensionCount", INT), ("DataType", EnumType("DT"))))
ENUMS = {"DT": EnumInfo("DT", "DML_TENSOR_DATA_TYPE_", ("FLOAT32", "UINT8"))}
SCOPE = Scope({"A": TENSOR, "B": TENSOR, "Axis": INT, "Start": NUMBER}, ENUMS)
DATA_TENSOR = TensorType(
    (("Sizes", LIST), ("DataType", EnumType("DML_TENSOR_DATA_TYPE")), ("Values", ARRAY))
)
DATA_ENUMS = {
    "DML_TENSOR_DATA_TYPE": EnumInfo(
        "DML_TENSOR_DATA_TYPE", "DML_TENSOR_DATA_TYPE_", ("FLOAT32", "INT8", "UINT8")
    )
}
DATA_SCOPE = Scope({"A": DATA_TENSOR, "B": DATA_TENSOR}, DATA_ENUMS, data_allowed=True)


class NoFacts:
    def element_bits(self, data_type: str) -> int:
        return {"FLOAT32": 32, "FLOAT16": 16, "UINT8": 8}[data_type]

    def numpy_dtype(self, data_type: str) -> str | None:
        return data_type.lower()

    def level_rank(self, level: str) -> int:
        return 0


def run(source: str, **values: object) -> object:
    env = Environment(values, NoFacts(), ENUMS)
    return compile_expression(source, SCOPE).evaluate(env)


REJECTED = [
    ('__import__("os")', "names starting with '_' are not allowed (got '__import__')", 1),
    ("A.__class__", "names starting with '_' are not allowed (got '__class__')", 1),
    ("len(A.Sizes).real", "member access '.real' is only allowed directly on a field name", 1),
    ("A.Sizes.count", "member access '.count' is only allowed directly on a field name", 1),
    ("lambda: 1", "Lambda is not allowed in a constraint expression", 1),
    ("[x for x in A.Sizes]", "ListComp is not allowed in a constraint expression", 1),
    ("Axis if Axis else 1", "IfExp is not allowed in a constraint expression", 1),
    ("Axis ** 2", "BinOp is not allowed in a constraint expression", 1),
    ("{'a': 1}", "Dict is not allowed in a constraint expression", 1),
    ("len(*A.Sizes)", "'*' arguments are not allowed (in call of 'len')", 5),
    ("len(x=A.Sizes)", "keyword arguments are not allowed (in call of 'len')", 1),
    ("A.Sizes[0:2:1]", "slices with a step are not allowed", 1),
    ("Axis is None", "comparison 'Is' is not allowed", 1),
    ("A.Sizes(1)", "only named functions can be called", 1),
    ("Axis <=", "syntax error: invalid syntax", 1),
    ("", "empty expression", 1),
    # Well-formed syntax, rejected by the type checker:
    ('getattr(A, "Sizes")', "unknown function 'getattr' (functions: abs, add_each, all,", 1),
    ('open("f")', "unknown function 'open'", 1),
    ("eval(Axis)", "unknown function 'eval'", 1),
    ("Bogus + 1", "unknown name 'Bogus' (known names: A, Axis, B, Start)", 1),
    ("A.Bogus == 1", "tensor has no member 'Bogus' (members: DataType, DimensionCount, Sizes)", 1),
    ("A.Values == 1", "'A.Values' reads tensor data, which only 'requires' constraints may do", 1),
    ("all(in_bounds(A.Sizes, 1))", "all() works on tensor data", 1),
    ("pad_left(Axis, 2)", "pad_left() argument 1 must be list; got int", 10),
    ("A.Sizes + Axis == A.Sizes", "the right operand of list '+' must be list; got int", 11),
    ("A.DataType == Axis", "cannot compare enum DT == int", 15),
    ('A.DataType == "FLOAT64"', "'FLOAT64' is not a member of any known enumeration", 15),
    ("Axis // Start", "the right operand of '//' must be int; got number", 9),
    ("not Axis", "the operand of 'not' must be bool; got int", 5),
]


@pytest.mark.parametrize(("source", "message", "column"), REJECTED)
def test_rejected_expressions_name_the_problem_and_column(
    source: str, message: str, column: int
) -> None:
    with pytest.raises(ExpressionError) as raised:
        compile_expression(source, SCOPE)
    assert raised.value.message.startswith(message)
    assert raised.value.col + 1 == column
    assert f"at column {column}" in str(raised.value)


def test_eval_exec_and_dunder_escapes_never_run() -> None:
    sneaky = ['__import__("os").system("false")', "A.__dict__", "_private"]
    for source in sneaky:
        with pytest.raises(ExpressionError):
            compile_expression(source, SCOPE)


def test_python_like_semantics() -> None:
    a = TensorValue("A", {"Sizes": [1, 2, 3, 4], "DimensionCount": 4, "DataType": "FLOAT32"})
    assert run("A.Sizes[-1]", A=a) == 4
    assert run("A.Sizes[1:-1]", A=a) == [2, 3]
    assert run("A.Sizes[:Axis] + A.Sizes[Axis + 1:]", A=a, Axis=1) == [1, 3, 4]
    assert run("1 <= Axis < A.DimensionCount", A=a, Axis=3) is True
    assert run("1 <= Axis < A.DimensionCount", A=a, Axis=4) is False
    assert run('A.DataType == "DML_TENSOR_DATA_TYPE_FLOAT32"', A=a) is True
    assert run("Axis == 0 or A.Sizes[Axis] == 2", A=a, Axis=0) is True  # short-circuits
    assert run("18446744073709551615 + 1 == 2 * 9223372036854775808") is True  # no overflow


def test_index_out_of_range_is_an_expression_error_not_a_crash() -> None:
    a = TensorValue("A", {"Sizes": [1, 2]})
    with pytest.raises(ExpressionError, match="index 5 is out of range for a list of 2 items"):
        run("A.Sizes[5] == 1", A=a)


def test_function_reference_matches_every_implemented_function() -> None:
    # Each function is documented in docs/spec-format.md; keep the list in step.
    documented = (
        __import__("pathlib").Path(__file__).parents[1] / "docs" / "spec-format.md"
    ).read_text()
    for name, function in FUNCTIONS.items():
        assert f"`{function.signature}`" in documented, name


# DMLCalcBufferTensorSize on sizes and strides the docs themselves work through.
@pytest.mark.parametrize(
    ("data_type", "sizes", "strides", "expected", "where"),
    [
        ("FLOAT32", [1, 1, 2, 3], [6, 6, 3, 1], 24, "DxDispatch Guide: fully defined tensor desc"),
        ("FLOAT32", [1, 1, 2, 3], [6, 3, 3, 1], 24, "packed NCHW strides of the same sizes"),
        ("UINT8", [2, 3], [5, 1], 8, "dml-strides.md padding example: 8 elements, 1 byte each"),
        ("UINT8", [2, 3], [0, 1], 4, "broadcast height stride: 3 bytes rounded up to 4"),
        ("FLOAT16", [3], [1], 8, "6 bytes rounded up to a DWORD"),
    ],
)
def test_buffer_tensor_size(
    data_type: str, sizes: list[int], strides: list[int], expected: int, where: str
) -> None:
    assert FUNCTIONS["buffer_tensor_size"].impl(NoFacts(), data_type, sizes, strides) == expected


@pytest.mark.parametrize(
    ("value", "data_type", "expected"),
    [
        (-2, "UINT8", 254),  # FILL_VALUE_SEQUENCE example 2: UINT8 delta -2 steps like 254
        (200, "INT8", -56),
        (2**64 + 5, "UINT64", 5),
        (-1, "UINT64", 2**64 - 1),
        (3.7, "INT32", 3),
        (0.1, "FLOAT16", float(np.float16(0.1))),
        (3.2, "FLOAT32", float(np.float32(3.2))),
    ],
)
def test_as_type_reads_values_like_a_scalar_union(
    value: float, data_type: str, expected: float
) -> None:
    facts = NoFacts()
    facts.numpy_dtype = lambda t: t.lower()  # type: ignore[method-assign]
    assert FUNCTIONS["as_type"].impl(facts, value, data_type) == expected


def test_data_functions_mark_each_offending_element() -> None:
    facts = NoFacts()
    indices = np.array([3, 1, 3, 0])  # SCATTER_ELEMENTS example 1: two writes to output[3]
    assert FUNCTIONS["unique_along"].impl(facts, indices, 0, 5).tolist() == [
        False,
        True,
        False,
        True,
    ]
    assert FUNCTIONS["in_bounds"].impl(facts, np.array([-3, -4, 2, 3]), 3).tolist() == [
        True,
        False,
        True,
        False,
    ]
    tuples = np.array([[0, 1], [1, 0], [-2, 1]])  # -2 normalises to 0 in a dimension of 2
    assert FUNCTIONS["in_bounds"].impl(facts, tuples, [2, 2]).all()
    assert FUNCTIONS["unique_targets"].impl(facts, tuples, [2, 2]).tolist() == [False, True, False]
    big = np.array([2**63 + 7], dtype=np.uint64)
    assert FUNCTIONS["in_bounds"].impl(facts, big, 2**64 - 1).tolist() == [True]


def test_element_wise_masks_mark_each_offending_element() -> None:
    facts = NoFacts()
    fn = {name: f.impl for name, f in FUNCTIONS.items()}
    divisors = np.array([2, 0, -1, 0], dtype=np.int32)
    assert fn["not_equal"](facts, divisors, 0).tolist() == [True, False, True, False]
    floats = np.array([0.0, -0.0, np.nan, 1.5], dtype=np.float32)
    assert fn["not_equal"](facts, floats, 0).tolist() == [False, False, True, True]
    assert fn["not_nan"](facts, floats).tolist() == [True, True, False, True]
    assert fn["not_nan"](facts, divisors).all()
    # ATAN_YX at the origin: y and x both zero (negative zero included).
    origin = fn["either"](facts, fn["not_equal"](facts, floats, 0), floats[::-1] != 0)
    assert origin.tolist() == [True, True, True, True]
    assert fn["both"](facts, np.array([True, False]), np.array([True, True])).tolist() == [
        True,
        False,
    ]
    # Rounded toward zero; NaN and infinities never fit an integer type; floats always do.
    values = np.array([-128.9, 127.9, 128.0, np.nan, np.inf], dtype=np.float64)
    assert fn["fits"](facts, values, "INT8").tolist() == [True, True, False, False, False]
    assert fn["fits"](facts, values, "FLOAT32").all()
    big = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    assert fn["fits"](facts, big, "INT64").tolist() == [False, False]
    bases = np.array([2, 2, 1, -1, 0, 3, -2], dtype=np.int32)
    exponents = np.array([6, 7, -5, -3, -1, 0, 7], dtype=np.int32)
    assert fn["power_fits"](facts, bases, exponents, "INT8").tolist() == [
        True,  # 64
        False,  # 128 is past INT8
        True,  # 1 ** -5 == 1
        True,  # (-1) ** -3 == -1
        False,  # 0 ** -1 has no value
        True,
        True,  # -128
    ]
    assert fn["power_fits"](facts, np.array([2.0]), np.array([0.5]), "FLOAT32").all()
    a = np.array([2**31 - 1, -3, 4], dtype=np.int32)
    b = np.array([2**31 - 1, 2, -4], dtype=np.int32)
    assert fn["same_parity"](facts, a, b).tolist() == [True, False, True]  # no wrapping
    boxes = np.array([[[0.0, 1.0, 2.5], [1.5, np.nan, -1.0]]], dtype=np.float32)
    assert fn["column"](facts, boxes, 0).tolist() == [[0.0, 1.5]]
    assert fn["whole"](facts, boxes).tolist() == [[[True, True, False], [False, False, True]]]
    first, last = fn["column"](facts, boxes, 1), fn["column"](facts, boxes, -1)
    assert fn["not_greater"](facts, first, last).tolist() == [[True, False]]  # NaN: never
    assert fn["lowest"](facts, "INT8") == -128
    assert fn["lowest"](facts, "UINT16") == 0
    assert fn["highest"](facts, "INT8") == 127
    assert fn["highest"](facts, "UINT64") == 2**64 - 1  # exact, not a float
    assert fn["highest"](facts, "FLOAT16") == 65504.0
    assert fn["is_float"](facts, "FLOAT16") and not fn["is_float"](facts, "INT32")


INTEGER_TYPES = ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")


@pytest.mark.parametrize("source", ["float16", "float32", "float64", "int8", "uint32", "int64"])
def test_fits_agrees_with_its_definition_at_every_bound(source: str) -> None:
    """`fits` works on whole arrays; its definition is per element on exact Python numbers:
    rounded toward zero, within the type's range (NaN and infinities never fit)."""
    facts = NoFacts()
    values: list[float | int] = [0, 1, -1, 0.5, -0.5, -0.0, 1e30, -1e30]
    for name in INTEGER_TYPES:
        info = np.iinfo(np.dtype(name.lower()))
        for bound in (int(info.min), int(info.max)):
            values += [bound - 1, bound, bound + 1, bound - 0.5, bound + 0.5, bound + 1.5]
    dtype = np.dtype(source)
    if dtype.kind == "f":
        values += [math.inf, -math.inf, math.nan, 2.0**63, 2.0**64, float(np.finfo(dtype).max)]
        with np.errstate(over="ignore"):
            array = np.array([float(v) for v in values], dtype=np.float64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        kept = [int(v) for v in values if info.min <= v <= info.max and v == int(v)]
        array = np.array(kept, dtype=object).astype(dtype)
    exact = array.astype(object).tolist()
    for name in INTEGER_TYPES:
        info = np.iinfo(np.dtype(name.lower()))
        expected = [
            not (isinstance(v, float) and not math.isfinite(v))
            and int(info.min) <= math.trunc(v) <= int(info.max)
            for v in exact
        ]
        assert FUNCTIONS["fits"].impl(facts, array, name).tolist() == expected, name


@pytest.mark.parametrize("data_type", ["INT8", "UINT8", "INT32", "INT64", "UINT64"])
@pytest.mark.parametrize("operand_type", [np.int8, np.int64, np.uint64, np.float32, np.float64])
def test_power_fits_matches_exact_integer_powers(data_type: str, operand_type: type) -> None:
    """power_fits is vectorized; Python's exact integers are the reference it must agree with."""
    facts = NoFacts()
    facts.numpy_dtype = lambda t: t.lower()  # type: ignore[method-assign]
    info = np.iinfo(np.dtype(data_type.lower()))
    generator = np.random.default_rng(7)
    pool = [0, 1, -1, 2, -2, 3, 7, -8, 11, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 2**31]
    pool += [2**32, 2**62, 2**63 - 1, -(2**63), 2**63, 2**64 - 1, 0.5, -2.5, np.inf, np.nan]
    kind = np.dtype(operand_type).kind
    usable = []
    for value in pool:
        if kind != "f" and isinstance(value, float):
            continue
        if kind != "f" and not np.iinfo(operand_type).min <= value <= np.iinfo(operand_type).max:
            continue
        usable.append(value)
    bases = np.array(generator.choice(np.array(usable, dtype=object), 400), dtype=operand_type)
    exponents = np.array(generator.choice(np.array(usable, dtype=object), 400), dtype=operand_type)

    def exact(base: object, exponent: object) -> bool:
        numbers = (base, exponent)
        if not all(
            isinstance(x, int) or (math.isfinite(x) and float(x).is_integer()) for x in numbers
        ):
            return False
        b, e = int(base), int(exponent)  # type: ignore[call-overload]
        if e < 0:
            return b == 1 or (b == -1 and (e % 2 == 0 or info.min <= -1))
        if abs(b) > 1 and e >= 64:
            return False
        return bool(info.min <= b**e <= info.max)

    expected = [exact(b, e) for b, e in zip(bases.tolist(), exponents.tolist(), strict=True)]
    assert FUNCTIONS["power_fits"].impl(facts, bases, exponents, data_type).tolist() == expected


def _written_once(targets: list[tuple[int, ...]]) -> list[bool]:
    return [targets.count(target) == 1 for target in targets]


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint32", "uint64"])
def test_unique_masks_agree_with_counting_each_target(dtype: str) -> None:
    """unique_along and unique_targets work on whole arrays; their definition counts each
    element's target (a negative index counts from the end), whatever the values."""
    rng = np.random.default_rng(7)
    facts = NoFacts()
    info = np.iinfo(np.dtype(dtype))
    for trial in range(40):
        shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(1, 4))))
        bound = int(rng.integers(1, 6))
        values = rng.integers(max(int(info.min), -bound), bound, shape).astype(dtype)
        if trial % 4 == 0:  # the type's extremes, far outside any tensor
            values.flat[0], values.flat[-1] = info.min, info.max
        axis = int(rng.integers(0, len(shape)))
        targets = []
        for position in np.ndindex(*shape):
            index = int(values[position])
            targets.append((*position[:axis], index + bound if index < 0 else index,
                            *position[axis + 1 :]))  # fmt: skip
        mask = FUNCTIONS["unique_along"].impl(facts, values, axis, bound)
        assert mask.reshape(-1).tolist() == _written_once(targets)
        bounds = [int(b) for b in rng.integers(1, 6, shape[-1])]
        tuples = [
            tuple(i + b if i < 0 else i for i, b in zip(row, bounds, strict=True))
            for row in values.reshape(-1, shape[-1]).tolist()
        ]
        mask = FUNCTIONS["unique_targets"].impl(facts, values, bounds)
        assert mask.reshape(-1).tolist() == _written_once(tuples)


def test_item_wise_list_functions() -> None:
    fn = {name: f.impl for name, f in FUNCTIONS.items()}
    facts = NoFacts()
    assert fn["add_each"](facts, [1, 2, 3], [0, 4, 1]) == [1, 6, 4]
    assert fn["mul_each"](facts, [1, 2, 3], [5, 1, 2]) == [5, 2, 6]
    assert fn["set_items"](facts, [3, 4, 5], [0, 2, 2], 1) == [1, 4, 1]  # repeats are harmless
    with pytest.raises(ValueError, match="positions \\[3\\] out of range for 3 items"):
        fn["set_items"](facts, [3, 4, 5], [3], 1)
    assert fn["each_at_most"](facts, [1, 4], [1, 5]) and not fn["each_at_most"](facts, [2], [1])
    assert fn["each_less"](facts, [0, 4], [1, 5]) and not fn["each_less"](facts, [1], [1])
    # SLICE1's example 1: a window of 4 at stride 2 visits 2 elements, 3 at -2 also 2.
    assert fn["strided_count"](facts, [1, 1, 4, 3], [1, 1, 2, -2]) == [1, 1, 2, 2]
    for name in ("add_each", "mul_each", "each_at_most", "each_less", "strided_count"):
        with pytest.raises(ValueError, match="lists of 2 and 1 items"):
            fn[name](facts, [1, 2], [1])
    with pytest.raises(ValueError, match="a stride of 0"):
        fn["strided_count"](facts, [3], [0])


def test_window_output_sizes_are_directmlxs() -> None:
    fn = {name: f.impl for name, f in FUNCTIONS.items()}
    facts = NoFacts()
    # DxDispatch's dml_convolution_2d.json: 3x3 input, 2x2 filter, stride 1, no padding -> 2x2
    assert fn["window_output_sizes"](facts, [3, 3], [2, 2], [1, 1], [1, 1], [0, 0], [0, 0]) == [
        2,
        2,
    ]
    # ResNet's stem: 224, 7x7 at stride 2, padding 3 each side -> 112; dilation 2 widens a 3 to 5
    assert fn["window_output_sizes"](facts, [224, 9], [7, 3], [2, 1], [1, 2], [3, 0], [3, 0]) == [
        112,
        5,
    ]
    # a window at stride 2 over 5 fits twice past the first: 1 + (5 - 2) // 2
    assert fn["window_output_sizes"](facts, [5], [2], [2], [1], [0], [0]) == [2]
    # the transposed form maps those sizes back, OutputPadding choosing among the inputs
    # a stride > 1 maps onto one output size
    assert fn["transposed_output_sizes"](facts, [112], [7], [2], [1], [3], [3], [1]) == [224]
    assert fn["transposed_output_sizes"](facts, [2], [2], [2], [1], [0], [0], [0]) == [4]
    assert fn["transposed_output_sizes"](facts, [2], [2], [2], [1], [0], [0], [1]) == [5]
    with pytest.raises(ValueError, match="lists of 1 and 2 items"):
        fn["window_output_sizes"](facts, [3, 3], [2], [1, 1], [1, 1], [0, 0], [0, 0])
    with pytest.raises(ValueError, match="a stride that is not positive"):
        fn["window_output_sizes"](facts, [3], [2], [0], [1], [0], [0])


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("add_each(A.Sizes, 1) == A.Sizes", "argument 2 must be list; got int"),
        ("mul_each(A.Sizes) == A.Sizes", "takes 2 argument(s); got 1"),
        ("strided_count(A.Sizes, A.Sizes) == 1", "cannot compare list == int"),
    ],
)
def test_item_wise_list_functions_type_check(source: str, error: str) -> None:
    with pytest.raises(ExpressionError) as raised:
        compile_expression(source, DATA_SCOPE)
    assert error in str(raised.value)


def test_gather_and_reduction_masks() -> None:
    fn = {name: f.impl for name, f in FUNCTIONS.items()}
    facts = NoFacts()
    assert fn["at_least"](facts, np.array([-3, -2, 2**63], dtype=object), -2).tolist() == [
        False,
        True,
        True,
    ]
    ok = np.array([[True, False], [True, True]])
    assert fn["all_along"](facts, ok, [1]).tolist() == [[False], [True]]
    assert fn["all_along"](facts, ok, [0, 1]).shape == (1, 1)
    # GATHER along axis 1 of a {2,3,4} input with indices {1,1,2}: output {2,2,4}; index 1
    # is bad, so every output cell with coordinate 1 in the middle dimension is undefined.
    cells = fn["gather_cells"](facts, np.array([[[True, False]]]), 1, 1, [2, 2, 4])
    assert cells[:, 1, :].all() and not cells[:, 0, :].any()
    # Index dimensions cropped off the front (leading 1s) still fit.
    cells = fn["gather_cells"](facts, np.array([[False, True]]), 2, 0, [2])
    assert cells.tolist() == [True, False]
    with pytest.raises(ValueError, match="no 1 trailing index dimensions"):
        fn["gather_cells"](facts, np.array([[True], [False]]), 1, 0, [1])
    rows = fn["rows_written"](facts, np.array([[1.0, -0.0], [np.nan, 0.0]]), [4, 2])
    assert rows.tolist() == [[True, True], [True, True], [False, False], [False, False]]
    # A recurrent network's {seq_length 3, directions 1, batch 2, hidden 1} output: batch 0
    # runs 1 step, batch 1 all 3.
    past = fn["steps_past"](facts, np.array([[[[1, 3]]]], np.uint32), [3, 1, 2, 1])
    assert past[:, 0, :, 0].tolist() == [[False, False], [True, False], [True, False]]
    assert fn["direction_count"](facts, "BIDIRECTIONAL") == 2
    assert fn["direction_count"](facts, "DML_RECURRENT_NETWORK_DIRECTION_BACKWARD") == 1


@pytest.mark.parametrize(
    ("function", "values", "data_type", "expected"),
    [
        ("SUM", [[100, -100], [1, 2]], "int8", [[False], [True]]),  # |100| + |-100| > 127
        ("DML_REDUCE_FUNCTION_L1", [[-128, 0], [127, 0]], "int8", [[False], [True]]),
        ("SUM_SQUARE", [[11, 2], [12, 0]], "int8", [[True], [False]]),  # 125 fits, 144 not
        ("MULTIPLY", [[16, 8], [-15, 8]], "int8", [[False], [True]]),
        ("MAX", [[127, 127], [127, 127]], "int8", [[True], [True]]),
        ("SUM", [[3.0e38, 3.0e38], [np.inf, 1.0]], "float32", [[False], [True]]),
        ("MULTIPLY", [[1e-30, 1e-30], [1e-20, 1e-10]], "float32", [[False], [True]]),
        ("MULTIPLY", [[1e20, 1e20], [0.0, 1e30]], "float32", [[False], [True]]),
        ("LOG_SUM_EXP", [[100.0, 0.0], [80.0, -np.inf]], "float32", [[False], [True]]),
        ("LOG_SUM_EXP", [[-200.0, -300.0], [-np.inf, -np.inf]], "float32", [[False], [True]]),
    ],
)
def test_reduced_fits(
    function: str, values: list[list[float]], data_type: str, expected: object
) -> None:
    dtype = np.float64 if data_type.startswith("float") else object
    mask = FUNCTIONS["reduced_fits"].impl(
        NoFacts(), np.array(values, dtype=dtype), function, [1], data_type.upper()
    )
    assert mask.tolist() == expected


def test_reduction_mask_expressions_type_check() -> None:
    enums = {
        **DATA_ENUMS,
        "DML_REDUCE_FUNCTION": EnumInfo("DML_REDUCE_FUNCTION", "DML_REDUCE_FUNCTION_", ("SUM",)),
    }
    scope = Scope({"A": DATA_TENSOR}, enums, data_allowed=True)
    source = 'all(reduced_fits(A.Values, "SUM", [0], A.DataType))'
    assert compile_expression(source, scope).type == BOOL
    with pytest.raises(ExpressionError) as raised:
        compile_expression("all(reduced_fits(A.Values, A.DataType, [0], A.DataType))", scope)
    assert "argument 2 must be enum DML_REDUCE_FUNCTION" in str(raised.value)


def test_cells_where_not_broadcasts_to_the_output() -> None:
    cells = FUNCTIONS["cells_where_not"].impl(NoFacts(), np.array([True, False]), [2, 2])
    assert cells.tolist() == [[False, True], [False, True]]
    one = FUNCTIONS["cells_where_not"].impl(NoFacts(), np.array([[False]]), [2, 3])
    assert one.all() and one.shape == (2, 3)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("all(not_equal(B.Values, 0))", False),
        ("all(either(not_equal(A.Values, 0), not_equal(B.Values, 0)))", True),
        ("all(both(not_nan(A.Values), not_nan(B.Values)))", True),
        ("all(fits(A.Values, A.DataType))", True),
        ("all(not_equal(A.Values, lowest(A.DataType)))", True),
    ],
)
def test_element_wise_requires_expressions_type_check_and_evaluate(
    source: str, expected: bool
) -> None:
    a = TensorValue("A", {"DataType": "INT8", "Sizes": [2], "Values": np.array([1, 0], "int8")})
    b = TensorValue("B", {"DataType": "INT8", "Sizes": [2], "Values": np.array([0, 3], "int8")})
    expression = compile_expression(source, DATA_SCOPE)
    assert expression.type == BOOL
    assert expression.evaluate(Environment({"A": a, "B": b}, NoFacts(), DATA_ENUMS)) is expected


def test_scatter_nd_derives_dependent_sizes_from_its_constraints(catalog: Catalog) -> None:
    from dmlspec.binding import derive_members

    spec = catalog.operator("SCATTER_ND")
    example = next(e for e in spec.examples if e.id == "example")
    fields = {k: v.to_json() if hasattr(v, "to_json") else v for k, v in example.valid_form}
    free = {k: v for k, v in fields.items() if k not in ("UpdatesTensor", "OutputTensor")}
    derived = derive_members(
        catalog.common,
        spec,
        free,
        ["UpdatesTensor.Sizes", "OutputTensor.Sizes", "UpdatesTensor.DataType"],
    )
    assert derived == {
        "UpdatesTensor.Sizes": fields["UpdatesTensor"]["Sizes"],
        "OutputTensor.Sizes": fields["OutputTensor"]["Sizes"],
        "UpdatesTensor.DataType": "FLOAT32",
    }


def test_derivation_of_an_undefined_target_is_refused(catalog: Catalog) -> None:
    from dmlspec.binding import derive_members

    spec = catalog.operator("FILL_VALUE_SEQUENCE")
    with pytest.raises(
        ValueError, match=r"no constraint of FILL_VALUE_SEQUENCE defines \['ValueStart'\]"
    ):
        derive_members(catalog.common, spec, {}, ["ValueStart"])


def test_catalog_functions_and_the_feature_level(catalog: Catalog) -> None:
    """The functions the catalog's rules use, through the generated-code path (View) too."""
    from dmlspec.expr import Environment, Scope, TensorValue, compile_expression
    from dmlspec.expr.types import INT, LIST, TENSORS, EnumType
    from dmlspec.loading.base import tensor_type
    from dmlspec.validation.runtime import Functions, TensorView

    common = catalog.common
    tensor = tensor_type(common)
    scope = Scope(
        {
            "FeatureLevel": EnumType("DML_FEATURE_LEVEL"),
            "Axes": LIST,
            "Axis": INT,
            "InputTensors": TENSORS,
            "OutputTensor": tensor,
        },
        common.enum_infos(),
    )
    inputs = [
        TensorValue(
            "InputTensors[0]", {"DataType": "FLOAT32", "Sizes": [1, 2, 3], "DimensionCount": 3}
        ),
        TensorValue(
            "InputTensors[1]", {"DataType": "FLOAT32", "Sizes": [1, 4, 3], "DimensionCount": 3}
        ),
    ]
    output = TensorValue(
        "OutputTensor", {"DataType": "FLOAT32", "Sizes": [1, 6, 3], "DimensionCount": 3}
    )
    env = Environment(
        {
            "FeatureLevel": "5_1",
            "Axes": [0, 2],
            "Axis": 1,
            "InputTensors": inputs,
            "OutputTensor": output,
        },
        common,
        common.enum_infos(),
    )
    cases = {
        'level_at_least(FeatureLevel, "5_0")': True,
        'level_at_least(FeatureLevel, "DML_FEATURE_LEVEL_5_2")': False,
        "all_less(Axes, OutputTensor.DimensionCount) and all_at_least(Axes, 0)": True,
        "distinct(Axes + [2])": False,
        "effective_rank([1, 1, 3, 4]) == 2 and effective_rank([1, 1]) == 1": True,
        "same_data_type(InputTensors, OutputTensor)": True,
        "same_dimension_count(InputTensors, OutputTensor)": True,
        "same_sizes_except(InputTensors, OutputTensor, Axis)": True,
        "same_sizes_except(InputTensors, OutputTensor, 2)": False,
        "sum_along(InputTensors, Axis) == OutputTensor.Sizes[Axis]": True,
        "sizes_along(InputTensors, Axis) == [2, 4]": True,
        "len(InputTensors) == 2": True,
    }
    fn = Functions(common)
    for source, expected in cases.items():
        expression = compile_expression(source, scope)
        assert expression.evaluate(env) is expected, source
    # the validators' runtime reads tensors as attribute views
    views = [TensorView(t.name, t.members) for t in inputs]
    assert fn.same_sizes_except(views, TensorView("OutputTensor", output.members), 1)
    assert fn.sum_along(views, 1) == 6
    assert fn.sizes_along(views, 1) == [2, 4]


def test_scalar_union_members_past_a_float_range_hold_infinity_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's overflow warning would be an error here
        assert scalar_union_value(1e300, np.float32) == math.inf
        assert scalar_union_value(-1e10, np.float16) == -math.inf
    assert scalar_union_value(-1, np.uint8) == 255 and scalar_union_value(2.7, np.int8) == 2
