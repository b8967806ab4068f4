"""The NumPy reference's reductions and scans against the pages: every documented example the
specs carry, and cases derived by hand (the page's sentence quoted) for each
DML_REDUCE_FUNCTION, tie-breaking, exclusive and reversed scans, integer wrap, and NaN and
signed zeros where the pages are silent (the reference's choices, UNDEFINED_NOTES). Expected
values are written out by hand, never computed by the code under test."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dmlspec import reference
from dmlspec.reference.reduction import REDUCTIONS, UNDEFINED_NOTES

from .reference_cases import (
    CATALOG,
    assert_outputs_equal,
    bits,
    call,
    dtype_of,
    example_case,
    example_ids,
    tensor,
)

FAMILY = sorted(REDUCTIONS)
NAN = math.nan


@pytest.mark.parametrize(("name", "example_id"), example_ids(FAMILY))
def test_documented_examples(name: str, example_id: str) -> None:
    case = example_case(CATALOG.operator(name), example_id)
    assert case is not None
    assert_outputs_equal(reference.run(case.operator, case.inputs), case.expected)


def test_every_family_operator_has_a_documented_example() -> None:
    assert {name for name, _ in example_ids(FAMILY)} == set(FAMILY)


def test_undefined_notes_name_family_operators() -> None:
    assert set(UNDEFINED_NOTES) <= set(REDUCTIONS)


# ---- REDUCE, one function at a time -------------------------------------------------------


def reduce(
    function: str, values: Any, data_type: str = "FLOAT32", axes: Any = None, out: str = ""
) -> Any:
    data = np.asarray(values, dtype=dtype_of(data_type))
    axes = [data.ndim - 1] if axes is None else axes
    sizes = [1 if d in axes else n for d, n in enumerate(data.shape)]
    desc = {
        "Function": f"DML_REDUCE_FUNCTION_{function}",
        "InputTensor": tensor(data_type, data.shape),
        "OutputTensor": tensor(out or data_type, sizes),
        "AxisCount": len(axes),
        "Axes": list(axes),
    }
    return call("REDUCE", desc, InputTensor=data)["OutputTensor"]


# Each DML_REDUCE_FUNCTION with the page's formula worked by hand on one row.
FLOAT_CASES = {
    "SUM": ([1, 2, 3, 4], 10),  # x = (x1 + x2 + ... + xn)
    "AVERAGE": ([1, 2, 3, 4], 2.5),  # x = (x1 + x2 + ... + xn) / n
    "L1": ([-1, 2, -3, 4], 10),  # x = |x1| + |x2| + ... + |xn|
    "L2": ([3, -4], 5),  # x = sqrt(x1^2 + x2^2 + ... + xn^2)
    "SUM_SQUARE": ([1, -2, 3], 14),  # x = x1^2 + x2^2 + ... + xn^2
    "MULTIPLY": ([1, -2, 3, 4], -24),  # x = (x1 * x2 * ... * xn)
    "LOG_SUM": ([1, 2], float(np.float32(math.log(3)))),  # x = log(x1 + x2 + ... + xn)
    "LOG_SUM_EXP": ([0, 0], float(np.float32(math.log(2)))),  # log(exp(x1) + ... + exp(xn))
    "MAX": ([1, 5, -7], 5),  # x = max(max(max(x1, x2), x3), ..., xn)
    "MIN": ([1, 5, -7], -7),  # x = min(min(min(x1, x2), x3), ..., xn)
    "ARGMAX": ([1, 5, -7, 5], 1),  # the first maximum (equivalent to INCREASING)
    "ARGMIN": ([1, -7, 5, -7], 1),
}


def test_every_reduce_function_has_a_case() -> None:
    enum = next(e for e in CATALOG.common.enums if e.name == "DML_REDUCE_FUNCTION")
    assert {m.name for m in enum.members} == set(FLOAT_CASES)


@pytest.mark.parametrize("function", sorted(FLOAT_CASES))
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_reduce_functions(function: str, data_type: str) -> None:
    values, expected = FLOAT_CASES[function]
    out = "UINT32" if function.startswith("ARG") else data_type
    got = reduce(function, [values], data_type, out=out)
    want = np.array([[expected]], dtype=got.dtype)
    if data_type == "FLOAT16" and function in ("LOG_SUM", "LOG_SUM_EXP"):
        want = np.array([[np.float16(expected)]])
    assert got.tolist() == want.tolist()


def test_reduce_with_the_function_as_a_number() -> None:
    # DML_REDUCE_FUNCTION's values count up from 0 in the header's order (ARGMAX = 0).
    desc = {
        "Function": 0,
        "InputTensor": tensor("FLOAT32", [3]),
        "OutputTensor": tensor("UINT32", [1]),
        "AxisCount": 1,
        "Axes": [0],
    }
    assert call("REDUCE", desc, InputTensor=[1, 9, 2])["OutputTensor"].tolist() == [1]


def test_reduce_log_sum_exp_does_not_overflow() -> None:
    # log(exp(1000) + exp(1000)) = 1000 + log(2), though exp(1000) overflows float64.
    got = reduce("LOG_SUM_EXP", [[1000, 1000]]).tolist()
    assert got == [[float(np.float32(1000 + math.log(2)))]]


def test_reduce_floats_round_once() -> None:
    # FLOAT16 2048 + 1 + 1: each partial sum in FLOAT16 would stay 2048 (2049 is a tie that
    # rounds to even); the exact sum, 2050, is a FLOAT16.
    assert reduce("SUM", [[2048, 1, 1]], "FLOAT16").tolist() == [[2050]]
    assert reduce("AVERAGE", [[2048, 1, 1, 2]], "FLOAT16").tolist() == [[513]]


def test_reduce_special_values() -> None:
    assert math.isnan(reduce("SUM", [[math.inf, -math.inf]]).item())  # inf + -inf
    assert reduce("SUM", [[math.inf, 1]]).item() == math.inf
    assert reduce("LOG_SUM", [[0, 0]]).item() == -math.inf  # log(0)
    assert math.isnan(reduce("LOG_SUM", [[-1, -2]]).item())  # log of a negative sum
    assert reduce("LOG_SUM_EXP", [[-math.inf, -math.inf]]).item() == -math.inf


def test_reduce_integers_wrap() -> None:
    # The page gives the formula and no overflow rule: the exact value modulo 2^bits.
    assert reduce("SUM", [[2**31 - 1, 1]], "INT32").tolist() == [[-(2**31)]]
    assert reduce("MULTIPLY", [[65536, 65536, 3]], "UINT32").tolist() == [[0]]
    assert reduce("MULTIPLY", [[-(2**62), 2]], "INT64").tolist() == [[-(2**63)]]
    assert reduce("L1", [[-(2**31)]], "INT32").tolist() == [[-(2**31)]]
    assert reduce("SUM_SQUARE", [[65536, 3]], "UINT32").tolist() == [[9]]
    assert reduce("SUM", [[2**64 - 1, 2]], "UINT64").tolist() == [[1]]
    assert reduce("MAX", [[-(2**63), 2**63 - 1]], "INT64").tolist() == [[2**63 - 1]]


def test_reduce_several_axes() -> None:
    data = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]  # {2, 2, 2}
    assert reduce("SUM", data, axes=[0, 2]).tolist() == [[[14], [22]]]
    # ARGMAX over {0, 2}: the index among the reduced elements, row-major over (d0, d2):
    # for d1 = 0 the elements are 1, 2, 5, 6 -> index 3.
    assert reduce("ARGMAX", data, axes=[2, 0], out="UINT32").tolist() == [[[3], [3]]]


# ---- ARGMIN and ARGMAX ---------------------------------------------------------------------


def arg(name: str, values: list[Any], direction: str, data_type: str = "FLOAT32") -> int:
    desc = {
        "InputTensor": tensor(data_type, [len(values)]),
        "OutputTensor": tensor("INT64", [1]),
        "AxisCount": 1,
        "Axes": [0],
        "AxisDirection": f"DML_AXIS_DIRECTION_{direction}",
    }
    return int(call(name, desc, InputTensor=values)["OutputTensor"][0])


def test_arg_tie_breaking_follows_axis_direction() -> None:
    # ARGMIN: "returns the index of the first minimum-valued element (for example,
    # argmin({1,2,3,2,1}) = 0)" / "the last ... (for example, argmin({1,2,3,2,1}) = 4)".
    assert arg("ARGMIN", [1, 2, 3, 2, 1], "INCREASING") == 0
    assert arg("ARGMIN", [1, 2, 3, 2, 1], "DECREASING") == 4
    # ARGMAX: argmax({3,2,1,2,3}) = 0 increasing, 4 decreasing.
    assert arg("ARGMAX", [3, 2, 1, 2, 3], "INCREASING") == 0
    assert arg("ARGMAX", [3, 2, 1, 2, 3], "DECREASING") == 4
    assert arg("ARGMAX", [3, 2, 1, 2, 3], "DECREASING", "INT8") == 4


def test_arg_nan_and_signed_zeros() -> None:
    # The pages are silent; the reference's choice (UNDEFINED_NOTES): NaN is the extreme, and
    # -0 ties with +0.
    assert arg("ARGMAX", [1, NAN, 3, NAN], "INCREASING") == 1
    assert arg("ARGMIN", [1, NAN, 3, NAN], "DECREASING") == 3
    assert arg("ARGMAX", [0.0, -0.0], "INCREASING") == 0
    assert arg("ARGMAX", [0.0, -0.0], "DECREASING") == 1
    assert arg("ARGMIN", [-0.0, 0.0], "DECREASING") == 1


def test_min_max_nan_and_signed_zeros() -> None:
    assert math.isnan(reduce("MAX", [[1, NAN, 3]]).item())
    assert math.isnan(reduce("MIN", [[1, 3, NAN]]).item())
    zeros = [[0.0, -0.0, 0.0]]
    assert bits(reduce("MIN", zeros)) == bits(np.float32(-0.0).reshape(1, 1))
    assert bits(reduce("MAX", [[-0.0, 0.0, -0.0]])) == bits(np.float32(0.0).reshape(1, 1))


# ---- TOP_K ---------------------------------------------------------------------------------


def top_k(
    values: list[Any], k: int, direction: str | None = None, data_type: str = "FLOAT32"
) -> tuple[np.ndarray, list[int]]:
    desc: dict[str, Any] = {
        "InputTensor": tensor(data_type, [len(values)]),
        "OutputValueTensor": tensor(data_type, [k]),
        "OutputIndexTensor": tensor("UINT32", [k]),
        "Axis": 0,
        "K": k,
    }
    name = "TOP_K"
    if direction is not None:
        desc["AxisDirection"] = f"DML_AXIS_DIRECTION_{direction}"
        name = "TOP_K1"
    out = call(name, desc, InputTensor=values)
    return out["OutputValueTensor"], out["OutputIndexTensor"].tolist()


def test_top_k_ties_keep_ascending_indices_in_both_directions() -> None:
    # "the indices of both elements are included, and are guaranteed to be ordered by
    # ascending element index. Note that this is true irrespective of the value of
    # AxisDirection."
    values, indices = top_k([2, 5, 2, 5, 2], 4, "DECREASING")
    assert values.tolist() == [5, 5, 2, 2] and indices == [1, 3, 0, 2]
    values, indices = top_k([2, 5, 2, 5, 2], 4, "INCREASING")
    assert values.tolist() == [2, 2, 2, 5] and indices == [0, 2, 4, 1]


def test_top_k_nan_and_signed_zeros() -> None:
    # The page orders values and is silent on NaN: the reference ranks NaN above every number.
    values, indices = top_k([1, NAN, 3], 2)
    assert math.isnan(values[0]) and values[1] == 3 and indices == [1, 2]
    values, indices = top_k([1, NAN, 3], 2, "INCREASING")
    assert values.tolist() == [1, 3] and indices == [0, 2]
    # -0 ties with +0: ascending indices, each element's own bits.
    values, indices = top_k([0.0, -0.0, 1.0], 3, "DECREASING")
    assert indices == [2, 0, 1]
    assert bits(values) == bits(np.array([1.0, 0.0, -0.0], dtype=np.float32))


def test_top_k_64_bit_integers_are_exact() -> None:
    values, indices = top_k([2**62, 2**62 + 1, -(2**63)], 3, data_type="INT64")
    assert values.tolist() == [2**62 + 1, 2**62, -(2**63)] and indices == [1, 0, 2]


# ---- scans ---------------------------------------------------------------------------------


def scan(
    name: str, values: list[Any], direction: str, exclusive: bool, data_type: str
) -> list[Any]:
    flag = "HasExclusiveSum" if name == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
    desc = {
        "InputTensor": tensor(data_type, [len(values)]),
        "OutputTensor": tensor(data_type, [len(values)]),
        "Axis": 0,
        "AxisDirection": f"DML_AXIS_DIRECTION_{direction}",
        flag: exclusive,
    }
    return call(name, desc, InputTensor=values)["OutputTensor"].tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("name", "direction", "exclusive", "expected"),
    [
        ("CUMULATIVE_SUMMATION", "INCREASING", False, [1, 3, 6, 10]),
        ("CUMULATIVE_SUMMATION", "INCREASING", True, [0, 1, 3, 6]),
        ("CUMULATIVE_SUMMATION", "DECREASING", False, [10, 9, 7, 4]),
        ("CUMULATIVE_SUMMATION", "DECREASING", True, [9, 7, 4, 0]),
        ("CUMULATIVE_PRODUCT", "INCREASING", False, [1, 2, 6, 24]),
        ("CUMULATIVE_PRODUCT", "INCREASING", True, [1, 1, 2, 6]),
        ("CUMULATIVE_PRODUCT", "DECREASING", False, [24, 24, 12, 4]),
        ("CUMULATIVE_PRODUCT", "DECREASING", True, [24, 12, 4, 1]),
    ],
)
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT32", "UINT64"])
def test_scans_exclusive_and_reversed(
    name: str, direction: str, exclusive: bool, expected: list[int], data_type: str
) -> None:
    # Exclusive: "the value of the current element is excluded when writing the running
    # tally"; DECREASING: "the summation occurs by traversing elements by descending index".
    assert scan(name, [1, 2, 3, 4], direction, exclusive, data_type) == expected


def test_scans_integers_wrap() -> None:
    top = 2**31 - 1
    got = scan("CUMULATIVE_SUMMATION", [top, 1, 1], "INCREASING", False, "INT32")
    assert got == [top, -(2**31), -(2**31) + 1]
    got = scan("CUMULATIVE_PRODUCT", [65536, 65536, 3], "INCREASING", False, "UINT32")
    assert got == [65536, 0, 0]
    got = scan("CUMULATIVE_SUMMATION", [1, 2**64 - 1], "DECREASING", False, "UINT64")
    assert got == [0, 2**64 - 1]


def test_scans_round_each_output_once() -> None:
    # FLOAT16: running in FLOAT16 would stick at 2048; in float64 the tallies are 2048, 2049
    # (a tie, rounded to even: 2048) and 2050.
    got = scan("CUMULATIVE_SUMMATION", [2048, 1, 1], "INCREASING", False, "FLOAT16")
    assert got == [2048, 2048, 2050]


def test_scans_signed_zeros() -> None:
    # Inclusive: the first output is the first element itself; exclusive: the first output
    # is the identity, +0 (the reference's reading, UNDEFINED_NOTES).
    inclusive = scan("CUMULATIVE_SUMMATION", [-0.0, -0.0], "INCREASING", False, "FLOAT32")
    assert [math.copysign(1, v) for v in inclusive] == [-1, -1]
    exclusive = scan("CUMULATIVE_SUMMATION", [-0.0, -0.0], "INCREASING", True, "FLOAT32")
    assert [math.copysign(1, v) for v in exclusive] == [1, -1]


# ---- NONZERO_COORDINATES -------------------------------------------------------------------


def test_nonzero_coordinates_zeros_nan_and_wide_rows() -> None:
    # "both negative and positive 0 ... are treated as zero"; NaN is not zero. N = 3 for a
    # 2-D input: rows are right-aligned, led by a 0 ({1,1,2,4} -> [0, 1, 3] on the page).
    desc = {
        "InputTensor": tensor("FLOAT32", [2, 2]),
        "OutputCountTensor": tensor("UINT32", [1, 1]),
        "OutputCoordinatesTensor": tensor("UINT32", [4, 3]),
    }
    out = call("NONZERO_COORDINATES", desc, InputTensor=[[-0.0, NAN], [0.0, -2]])
    assert out["OutputCountTensor"].tolist() == [[2]]
    # "The remaining elements of this tensor beyond the OutputCount are undefined": zeros.
    assert out["OutputCoordinatesTensor"].tolist() == [[0, 0, 1], [0, 1, 1], [0, 0, 0], [0, 0, 0]]
