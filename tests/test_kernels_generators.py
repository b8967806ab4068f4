"""The generator primitive (and VALUE_SCALE_2D, the issue's element-wise operator), run as their
specs' kernel sections say: every documented example, Random123's known answers for Philox
4x32-10 and the counter update, values stored in 64-bit and narrow types."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmlspec.kernels import generator
from tests.kernel_cases import (
    CATALOG,
    assert_exact,
    example_ids,
    family,
    run,
    run_example,
    tensor,
)

FAMILY = family("generator")
BIG = 2**53 + 1  # not a FLOAT64: a kernel that converts 64-bit integers would lose it

# As written on drafted specs' pages, and wrong there (the spec holds them as written).
PAGE_ERRATA = {
    ("DIAGONAL_MATRIX1", "example_1"): "the page prints 1 on the diagonal, but Value is 7",
}


def test_every_operator_names_a_function_of_the_table_and_every_function_is_named() -> None:
    named = {CATALOG.operator(name).checked_kernel.function for name in FAMILY}
    assert named == set(generator.FUNCTIONS)


@pytest.mark.parametrize(
    ("name", "example_id"),
    [
        pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=PAGE_ERRATA[case]))
        if case in PAGE_ERRATA
        else case
        for case in example_ids(FAMILY)
    ],
)
def test_documented_examples(name: str, example_id: str) -> None:
    expected, actual = run_example(name, example_id)
    for field, value in expected.items():
        assert_exact(value, actual[field])


# Random123's known-answer vectors for philox4x32_R(10) (kat_vectors): counter, key, result.
ZEROS = ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8))
ONES = ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD))
PI = (
    (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
    (0xA4093822, 0x299F31D0),
    (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
)


@pytest.mark.parametrize(("counter", "key", "result"), [ZEROS, ONES, PI])
def test_philox_known_answers(
    counter: tuple[int, ...], key: tuple[int, ...], result: tuple[int, ...]
) -> None:
    words = [jnp.asarray(w, jnp.uint32) for w in (*counter, *key)]
    with jax.enable_x64(True):
        actual = jax.jit(generator.philox4x32)(tuple(words[:4]), tuple(words[4:]))
    assert [int(w) for w in actual] == list(result)


def _random(state: list[int], sizes: list[int]) -> dict[str, Any]:
    input_state = np.array(state, np.uint32).reshape(1, 1, 1, 6)
    desc = {
        "InputStateTensor": tensor(input_state),
        "OutputTensor": tensor(np.uint32, sizes),
        "OutputStateTensor": tensor(input_state),
        "Type": "DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10",
    }
    return run("RANDOM_GENERATOR", desc, {"InputStateTensor": input_state})


def test_random_generator_blocks_follow_the_128_bit_counter_across_every_word() -> None:
    # Counter 2^128 - 1, key 0: block 0 is counter 2^128 - 1, block 1 wraps to counter 0.
    result = _random([0xFFFFFFFF] * 4 + [0, 0], [2, 4])
    assert result["OutputTensor"][1].tolist() == list(ZEROS[2])
    assert result["OutputStateTensor"].reshape(-1).tolist() == [1, 0, 0, 0, 0, 0]


def test_random_generator_first_block_and_a_partial_last_block() -> None:
    ones = _random([*ONES[0], *ONES[1]], [4])
    assert ones["OutputTensor"].tolist() == list(ONES[2])
    assert ones["OutputStateTensor"].reshape(-1).tolist() == [0, 0, 0, 0, *ONES[1]]
    # Six outputs: two blocks; the second (counter PI) contributes its first two words.
    before = [PI[0][0] - 1, *PI[0][1:], *PI[1]]
    pi = _random(before, [1, 6])
    assert pi["OutputTensor"].reshape(-1)[4:].tolist() == list(PI[2][:2])
    assert pi["OutputStateTensor"].reshape(-1).tolist() == [PI[0][0] + 1, *PI[0][1:], *PI[1]]


def test_random_generator_advances_the_counter_by_the_pages_count() -> None:
    # The page's remark: {3,3,20,7219} outputs advance 0x48656c6c'6f46726f'6d536561'74746c65 by
    # 324,855. (The page prints the sum as ...'746f776e, which is not that sum; the low word
    # 0x74746c65 + 324855 is 0x7479615c.)
    counter = [0x74746C65, 0x6D536561, 0x6F46726F, 0x48656C6C]
    result = _random([*counter, 7, 9], [3, 3, 20, 7219])
    assert result["OutputStateTensor"].reshape(-1).tolist() == [0x7479615C, *counter[1:], 7, 9]


@pytest.mark.parametrize(
    ("data_type", "value", "stored"),
    [
        ("INT64", BIG, BIG),
        ("UINT64", 2**64 - 1, 2**64 - 1),
        ("INT8", 200, -56),  # a union member keeps the low bits
        ("UINT8", -1, 255),
        ("FLOAT16", 0.1, np.float16(0.1)),
        ("FLOAT64", 0.1, 0.1),
    ],
)
def test_fill_value_constant_stores_the_union_member(
    data_type: str, value: Any, stored: Any
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    out = np.full((2, 3), stored, dtype)
    desc = {"OutputTensor": tensor(out), "ValueDataType": data_type, "Value": value}
    assert_exact(out, run("FILL_VALUE_CONSTANT", desc, {})["OutputTensor"])


def test_diagonal_matrix_truncates_a_float_value_for_integer_types() -> None:
    # "10.6 will become 10"; Offset 1 shifts right, over a batch of two 2x3 matrices.
    out = np.array([[[0, 10, 0], [0, 0, 10]]] * 2, np.int32)
    desc = {"OutputTensor": tensor(out), "Offset": 1, "Value": 10.6}
    assert_exact(out, run("DIAGONAL_MATRIX", desc, {})["OutputTensor"])


def test_diagonal_matrix1_inverted_range_keeps_64_bit_input_on_the_diagonal() -> None:
    data = np.array([[BIG, 2**64 - 1], [3, 2**63]], np.uint64)
    out = np.array([[BIG, 5], [5, 2**63]], np.uint64)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "ValueDataType": "UINT64",
        "Value": 5,
        "DiagonalFillBegin": 1,
        "DiagonalFillEnd": 0,
    }
    assert_exact(out, run("DIAGONAL_MATRIX1", desc, {"InputTensor": data})["OutputTensor"])


def test_diagonal_matrix1_without_input_fills_zeros_around_the_strip() -> None:
    out = np.array([[BIG, 0, 0], [BIG, BIG, 0]], np.int64)
    desc = {
        "OutputTensor": tensor(out),
        "ValueDataType": "INT64",
        "Value": BIG,
        "DiagonalFillBegin": -1,
        "DiagonalFillEnd": 1,
    }
    assert_exact(out, run("DIAGONAL_MATRIX1", desc, {})["OutputTensor"])


@pytest.mark.parametrize(
    ("data_type", "values", "scale", "bias", "expected"),
    [
        # Scale * x + Bias[channel], three channels.
        (
            "FLOAT32",
            [[1, 2], [3, 4], [5, 6]],
            2.0,
            [1.0, -1.0, 0.5],
            [[3, 5], [5, 7], [10.5, 12.5]],
        ),
        # IEEE: -0 * 1 + 0 is +0.
        (
            "FLOAT32",
            [[-0.0, 1.0], [2, 3], [4, 5]],
            1.0,
            [0.0, 0.0, 0.0],
            [[0.0, 1], [2, 3], [4, 5]],
        ),
        # FLOAT16 computed in FLOAT32, rounded once: 2048 * 1 + 1.5 = 2049.5 rounds to 2050.
        ("FLOAT16", [[2048]], 1.0, [1.5], [[2050]]),
    ],
)
def test_value_scale_2d_adds_one_bias_per_channel(
    data_type: str, values: Any, scale: float, bias: list[float], expected: Any
) -> None:
    dtype = np.dtype(CATALOG.common.data_type(data_type).numpy)
    channels = len(bias)
    data = np.array(values, dtype).reshape(1, channels, 1, -1)
    out = np.array(expected, dtype).reshape(data.shape)
    desc = {
        "InputTensor": tensor(data),
        "OutputTensor": tensor(out),
        "Scale": scale,
        "ChannelCount": channels,
        "Bias": bias,
    }
    assert_exact(out, run("VALUE_SCALE_2D", desc, {"InputTensor": data})["OutputTensor"])
