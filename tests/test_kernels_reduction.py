"""The reduction primitive, run as its specs' kernel sections say: every documented example, and
hand-derived cases for what the examples leave out (every reduce function, integer wrap, 64-bit
values above 2^53, AxisDirection ties, TOP_K orders, exclusive and reversed scans, NONZERO
counts and padding rows). Expected values come from the pages, from hand arithmetic, or from
NumPy formulas in FLOAT64 rounded once (the kernels' stated numerics)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dmlspec.kernels import host, reduction
from tests.kernel_cases import (
    CATALOG,
    assert_exact,
    example_ids,
    family,
    misaligned,
    numpy_arg,
    run,
    run_example,
    tensor,
)

FAMILY = family("reduction")
BIG = 2**53 + 1  # not a FLOAT64: a kernel that converts 64-bit integers would lose it


def test_every_operator_names_a_function_of_the_table_and_every_function_is_named() -> None:
    named = {CATALOG.operator(name).checked_kernel.function for name in FAMILY}
    assert named == set(reduction.FUNCTIONS)


def test_every_reduce_function_has_a_formula() -> None:
    enum = next(e for e in CATALOG.common.enums if e.name == "DML_REDUCE_FUNCTION")
    assert {*reduction.REDUCE_FUNCTIONS, "ARGMIN", "ARGMAX"} == {m.name for m in enum.members}


@pytest.mark.parametrize(("name", "example_id"), example_ids(FAMILY))
def test_documented_examples(name: str, example_id: str) -> None:
    expected, actual = run_example(name, example_id)
    for field, value in expected.items():
        assert_exact(value, actual[field])


def _reduce(function: str, data: np.ndarray, axes: list[int], out: np.ndarray) -> Any:
    desc = {
        "Function": f"DML_REDUCE_FUNCTION_{function}",
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "AxisCount": len(axes),
        "Axes": axes,
    }
    return run("REDUCE", desc, {"InputTensor": data})["OutputTensor"]


X = np.array([[1, -2, 3], [4, 5, -6]], np.float64)
FORMULAS = {
    "SUM": lambda x: x.sum(1),
    "MULTIPLY": lambda x: x.prod(1),
    "MIN": lambda x: x.min(1),
    "MAX": lambda x: x.max(1),
    "AVERAGE": lambda x: x.mean(1),
    "L1": lambda x: np.abs(x).sum(1),
    "L2": lambda x: np.sqrt((x * x).sum(1)),
    "LOG_SUM": lambda x: np.log(x.sum(1)),
    "LOG_SUM_EXP": lambda x: np.log(np.exp(x).sum(1)),
    "SUM_SQUARE": lambda x: (x * x).sum(1),
}


@pytest.mark.parametrize("function", sorted(FORMULAS))
def test_reduce_functions_on_float32_rows(function: str) -> None:
    expected = FORMULAS[function](X).astype(np.float32).reshape(2, 1)
    actual = _reduce(function, X.astype(np.float32), [1], expected)
    assert_exact(expected, actual)


@pytest.mark.parametrize(("function", "index"), [("ARGMIN", [[1, 0, 0]]), ("ARGMAX", [[0, 1, 0]])])
def test_reduce_arg_functions_pick_the_first_of_equal_elements(
    function: str, index: list[list[int]]
) -> None:
    data = np.array([[1, 5, 7], [0, 9, 7]], np.int16)
    expected = np.array(index, np.uint32)
    assert_exact(expected, _reduce(function, data, [0], expected))


def test_reduce_float16_sums_are_rounded_once() -> None:
    # 2048 + 1 + 1 one FLOAT16 step at a time stays 2048; the exact 2050 is a FLOAT16.
    data = np.array([2048, 1, 1], np.float16)
    expected = np.array([2050], np.float16)
    assert_exact(expected, _reduce("SUM", data, [0], expected))


@pytest.mark.parametrize(
    ("function", "data_type", "values", "result"),
    [
        ("SUM", "INT32", [2**31 - 1, 1], -(2**31)),
        ("SUM", "UINT32", [2**32 - 1, 2], 1),
        ("SUM", "INT64", [2**53, 1], BIG),
        ("MULTIPLY", "UINT64", [2**32, 2**32], 0),
        ("MULTIPLY", "INT64", [2**31, 2**31 + 1], 2**62 + 2**31),
        ("SUM_SQUARE", "INT32", [65536, 3], 9),
        ("L1", "INT32", [-5, 3], 8),
        ("MIN", "INT64", [BIG, -(2**63)], -(2**63)),
        ("MAX", "UINT64", [2**64 - 1, BIG], 2**64 - 1),
        ("MAX", "INT8", [-128, 127], 127),
    ],
)
def test_reduce_integers_wrap_and_64_bit_values_are_exact(
    function: str, data_type: str, values: list[int], result: int
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    expected = np.array([result], dtype)
    assert_exact(expected, _reduce(function, np.array(values, dtype), [0], expected))


def _arg(name: str, data: np.ndarray, axes: list[int], direction: str, out: np.ndarray) -> Any:
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "AxisCount": len(axes),
        "Axes": axes,
        "AxisDirection": f"DML_AXIS_DIRECTION_{direction}",
    }
    return run(name, desc, {"InputTensor": data})["OutputTensor"]


@pytest.mark.parametrize(
    ("name", "values", "direction", "index"),
    [
        # The pages' own: argmin({1,2,3,2,1}) is 0 or 4, argmax({3,2,1,2,3}) 0 or 4.
        ("ARGMIN", [1, 2, 3, 2, 1], "INCREASING", 0),
        ("ARGMIN", [1, 2, 3, 2, 1], "DECREASING", 4),
        ("ARGMAX", [3, 2, 1, 2, 3], "INCREASING", 0),
        ("ARGMAX", [3, 2, 1, 2, 3], "DECREASING", 4),
        ("ARGMAX", [2**53, BIG, 2**53], "INCREASING", 1),  # equal as FLOAT64
    ],
)
def test_axis_direction_picks_among_equal_elements(
    name: str, values: list[int], direction: str, index: int
) -> None:
    data = np.array(values, np.int64)
    expected = np.array([index], np.uint64)
    assert_exact(expected, _arg(name, data, [0], direction, expected))


@pytest.mark.parametrize(("direction", "index"), [("INCREASING", [3, 2]), ("DECREASING", [3, 3])])
def test_arg_over_several_axes_counts_row_major_over_them(direction: str, index: list[int]) -> None:
    # Reducing axes 0 and 2 (given out of order) of x[a, b, c]: the index is a * 2 + c.
    data = np.array([[[5, 1], [0, 2]], [[3, 9], [7, 7]]], np.float32)
    expected = np.array(index, np.int64).reshape(1, 2, 1)
    assert_exact(expected, _arg("ARGMAX", data, [2, 0], direction, expected))


def _large_values(kind: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    rng = np.random.default_rng(len(kind))
    if kind == "subnormal":  # what XLA's float comparisons see as zeros
        steps = rng.integers(-3, 4, shape) * np.finfo(dtype).smallest_subnormal
        return steps.astype(dtype)
    if kind == "signed zeros":
        zeros = np.where(rng.random(shape) < 0.5, -0.0, 0.0)
        return (zeros - (rng.random(shape) < 0.1)).astype(dtype)
    values = np.round(rng.standard_normal(shape) * 2).astype(dtype)  # many ties
    if kind == "infinities":
        values[rng.random(shape) < 0.01] = np.inf
        values[rng.random(shape) < 0.01] = -np.inf
    return values


@pytest.mark.parametrize("name", ["ARGMAX", "ARGMIN"])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize(
    ("shape", "axes"),
    [((256, 512), [1]), ((512, 256), [0]), ((4, 64, 8, 64), [1, 2]), ((4, 10007, 2), [1])],
    ids=["inner", "outer", "middle pair", "no block divides"],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_arg_of_large_floats_matches_numpy_with_ties_subnormals_zeros_and_infinities(
    name: str, direction: str, shape: tuple[int, ...], axes: list[int], dtype: type
) -> None:
    # Inputs of FAST_ARG_MIN_ELEMENTS and more take the two-step search, whose float
    # comparisons see subnormals as zeros; rows where that matters take the exact path.
    assert np.prod(shape) >= reduction.FAST_ARG_MIN_ELEMENTS
    for kind in ("ties", "subnormal", "signed zeros", "infinities"):
        data = _large_values(kind, shape, dtype)
        expected = numpy_arg(name, data, axes, direction)
        actual = _arg(name, data, axes, direction, expected.astype(np.uint32))
        np.testing.assert_array_equal(actual, expected, err_msg=kind)


@pytest.mark.parametrize("kind", ["ties", "subnormal"])
def test_arg_of_a_misaligned_numpy_input_takes_both_paths_through_its_window(kind: str) -> None:
    # A large misaligned NumPy array reaches the kernel as a slice of a window (kernels.host).
    data = misaligned((2048, 256), "float32", 16)
    data[...] = _large_values(kind, data.shape, np.float32)
    assert host.window(data) is not None
    expected = numpy_arg("ARGMAX", data, [1], "INCREASING")
    actual = _arg("ARGMAX", data, [1], "INCREASING", expected.astype(np.uint32))
    np.testing.assert_array_equal(actual, expected)


def test_two_step_arg_search_reports_rows_it_cannot_judge() -> None:
    """The flag that sends a call to the exact path: set for normal extremes only."""
    normal = np.arange(4 * 256, dtype=np.float32).reshape(4, 256) - 100
    tiny = np.zeros((4, 256), np.float32)
    tiny[2, 7] = np.finfo(np.float32).smallest_subnormal
    with_nan = normal.copy()
    with_nan[:, 3] = np.nan
    for data, exact in ((normal, True), (-normal, True), (tiny, False), (with_nan, None)):
        for largest in (True, False):
            grouped = data.reshape(4, 2, 128, 1)  # rows of two blocks of 128
            index, judged = reduction._arg_by_blocks(grouped, largest=largest, last=False)
            if exact is not None:
                assert bool(judged) is exact, (data[0, :3], largest)
            if bool(judged):
                extreme = np.nanmax(data, axis=1) if largest else np.nanmin(data, axis=1)
                assert (np.take_along_axis(data, np.asarray(index), 1)[:, 0] == extreme).all()


@pytest.mark.parametrize(
    ("data_type", "values", "direction", "k", "top", "index"),
    [
        ("INT8", [-128, 127, 0, -128], "DECREASING", 3, [127, 0, -128], [1, 2, 0]),
        ("INT8", [-128, 127, 0, -128], "INCREASING", 3, [-128, -128, 0], [0, 3, 2]),
        ("UINT64", [2**64 - 1, 0, 2**63, 2**64 - 1], "DECREASING", 2, [2**64 - 1] * 2, [0, 3]),
        ("INT64", [BIG, 2**53, BIG + 1], "INCREASING", 2, [2**53, BIG], [1, 0]),
        ("FLOAT32", [0.0, -0.0, 1.0], "INCREASING", 2, [0.0, -0.0], [0, 1]),
    ],
)
def test_top_k1_orders_and_ties(
    data_type: str,
    values: list[Any],
    direction: str,
    k: int,
    top: list[Any],
    index: list[int],
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    data = np.array([values], dtype)
    expected_values = np.array([top], dtype)
    expected_index = np.array([index], np.uint64)
    desc = {
        "InputTensor": tensor(data),
        "OutputValueTensor": tensor(expected_values),
        "OutputIndexTensor": tensor(expected_index),
        "Axis": 1,
        "K": k,
        "AxisDirection": direction,
    }
    result = run("TOP_K1", desc, {"InputTensor": data})
    assert_exact(expected_values, result["OutputValueTensor"])
    assert_exact(expected_index, result["OutputIndexTensor"])


# The pages' input row [2, 1, 3, 5], each scan worked out by hand.
SCANS = [
    ("CUMULATIVE_SUMMATION", "INCREASING", False, [2, 3, 6, 11]),
    ("CUMULATIVE_SUMMATION", "INCREASING", True, [0, 2, 3, 6]),
    ("CUMULATIVE_SUMMATION", "DECREASING", False, [11, 9, 8, 5]),
    ("CUMULATIVE_SUMMATION", "DECREASING", True, [9, 8, 5, 0]),
    ("CUMULATIVE_PRODUCT", "INCREASING", False, [2, 2, 6, 30]),
    ("CUMULATIVE_PRODUCT", "INCREASING", True, [1, 2, 2, 6]),
    ("CUMULATIVE_PRODUCT", "DECREASING", False, [30, 15, 15, 5]),
    ("CUMULATIVE_PRODUCT", "DECREASING", True, [15, 15, 5, 1]),
]


def _scan(name: str, data: np.ndarray, direction: str, exclusive: bool) -> Any:
    flag = "HasExclusiveSum" if name == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(data),
        "Axis": data.ndim - 1,
        "AxisDirection": direction,
        flag: exclusive,
    }
    return run(name, desc, {"InputTensor": data})["OutputTensor"]


# Every combination on UINT32; FLOAT32 (the pages' type) where the examples have none.
SCAN_CASES = [("UINT32", *scan) for scan in SCANS] + [
    ("FLOAT32", *scan) for scan in SCANS if scan[1:3] == ("DECREASING", True)
]


@pytest.mark.parametrize(("data_type", "name", "direction", "exclusive", "expected"), SCAN_CASES)
def test_scans_exclusive_and_reversed(
    data_type: str, name: str, direction: str, exclusive: bool, expected: list[int]
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    data = np.array([[2, 1, 3, 5]], dtype)
    actual = _scan(name, data, direction, exclusive)
    assert_exact(np.array([expected], dtype), actual)


@pytest.mark.parametrize(
    ("name", "data_type", "values", "expected"),
    [
        ("CUMULATIVE_SUMMATION", "INT32", [2**31 - 1, 1], [2**31 - 1, -(2**31)]),
        ("CUMULATIVE_SUMMATION", "INT64", [2**53, 1, -1], [2**53, BIG, 2**53]),
        ("CUMULATIVE_PRODUCT", "UINT64", [2**32, 2**32], [2**32, 0]),
        # Exact partial sums rounded once: 2049 is halfway, to even 2048.
        ("CUMULATIVE_SUMMATION", "FLOAT16", [2048, 1, 1], [2048, 2048, 2050]),
    ],
)
def test_scans_wrap_and_round_once(
    name: str, data_type: str, values: list[int], expected: list[int]
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    actual = _scan(name, np.array(values, dtype), "INCREASING", False)
    assert_exact(np.array(expected, dtype), actual)


@pytest.mark.parametrize(
    ("columns", "rows"),
    [(3, [[0, 0, 2], [0, 1, 0], [0, 1, 2]]), (2, [[0, 2], [1, 0], [1, 2]])],
)
def test_nonzero_coordinates_count_negative_zero_as_zero_and_nan_as_nonzero(
    columns: int, rows: list[list[int]]
) -> None:
    data = np.array([[[0.0, -0.0, np.nan], [1.0, 0.0, -2.0]]], np.float32)
    count = np.array([3], np.uint32)
    coordinates = np.zeros((6, columns), np.uint32)
    coordinates[:3] = rows  # rows past the count: zeros
    desc = {
        "InputTensor": tensor(data),
        "OutputCountTensor": tensor(count),
        "OutputCoordinatesTensor": tensor(coordinates),
    }
    result = run("NONZERO_COORDINATES", desc, {"InputTensor": data})
    assert_exact(count, result["OutputCountTensor"])
    assert_exact(coordinates, result["OutputCoordinatesTensor"])


def test_nonzero_coordinates_of_all_zeros() -> None:
    data = np.zeros((2, 2), np.int8)
    desc = {
        "InputTensor": tensor(data),
        "OutputCountTensor": tensor(np.uint32, [1, 1]),
        "OutputCoordinatesTensor": tensor(np.uint32, [4, 2]),
    }
    result = run("NONZERO_COORDINATES", desc, {"InputTensor": data})
    assert_exact(np.zeros((1, 1), np.uint32), result["OutputCountTensor"])
    assert_exact(np.zeros((4, 2), np.uint32), result["OutputCoordinatesTensor"])
