"""RANDOM_GENERATOR (Philox 4x32-10) in the NumPy reference, bit-exact.

The expected words come from the Philox paper's known-answer vectors (Salmon et al., SC11;
Random123's kat_vectors, philox4x32 with 10 rounds) and, for counters the vectors do not
cover, from `philox_block` below: the paper's round function written out once more, scalar,
in plain Python, and itself checked against the same vectors. The state layout follows the
page: elements 0-3 the 128-bit counter (element 0 its least significant word, the
reference's reading), elements 4-5 the key."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from .reference_cases import call, tensor

# Known answers: (counter words v[0..3], key words v[0..1]) -> output words v[0..3].
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    (
        (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
    ),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]

MASK = 0xFFFFFFFF


def philox_block(counter: tuple[int, ...], key: tuple[int, ...]) -> tuple[int, ...]:
    """Philox4x32-10 of one counter, from the paper: ten rounds of
    (hi0, lo0) = mulhilo(0xD2511F53, c0), (hi1, lo1) = mulhilo(0xCD9E8D57, c2),
    c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0), the key bumped by (0x9E3779B9, 0xBB67AE85)
    between rounds."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_number in range(10):
        if round_number:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK, (p0 >> 32) ^ c3 ^ k1, p0 & MASK
    return c0, c1, c2, c3


def words(value: int) -> list[int]:
    return [(value >> (32 * j)) & MASK for j in range(4)]


def generate(state: list[int], sizes: list[int], with_state: bool = True) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputStateTensor": tensor("UINT32", [1, 1, 1, 6]),
        "OutputTensor": tensor("UINT32", sizes),
        "Type": "DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10",
    }
    if with_state:
        desc["OutputStateTensor"] = tensor("UINT32", [1, 1, 1, 6])
    return call("RANDOM_GENERATOR", desc, InputStateTensor=[[[state]]])


@pytest.mark.parametrize(("counter", "key", "expected"), KNOWN_ANSWERS)
def test_the_test_oracle_gives_the_known_answers(
    counter: tuple[int, ...], key: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    assert philox_block(counter, key) == expected


@pytest.mark.parametrize(("counter", "key", "expected"), KNOWN_ANSWERS)
def test_known_answers(
    counter: tuple[int, ...], key: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    out = generate([*counter, *key], [1, 1, 1, 4])
    assert out["OutputTensor"].dtype == np.uint32
    assert out["OutputTensor"].reshape(-1).tolist() == list(expected)


def test_blocks_follow_the_counter_with_carries() -> None:
    # Output elements 4j..4j+3 are Philox of counter + j; the 128-bit counter carries across
    # its words: {0xffffffff, 0xffffffff, 0, 0} + 1 = {0, 0, 1, 0}. Ten elements need three
    # blocks, and the state advances by ceil(10 / 4) = 3.
    start = 2**64 - 2
    key = (0x01234567, 0x89ABCDEF)
    expected = []
    for j in range(3):
        expected += list(philox_block(tuple(words(start + j)), key))
    out = generate([*words(start), *key], [1, 2, 5])
    assert out["OutputTensor"].reshape(-1).tolist() == expected[:10]
    assert out["OutputTensor"].shape == (1, 2, 5)
    assert out["OutputStateTensor"].reshape(-1).tolist() == [*words(start + 3), *key]


def test_the_counter_wraps_at_2_to_the_128() -> None:
    out = generate([MASK] * 4 + [5, 6], [1, 1, 1, 1])
    assert out["OutputStateTensor"].reshape(-1).tolist() == [0, 0, 0, 0, 5, 6]
    assert out["OutputTensor"].reshape(-1).tolist() == [philox_block((MASK,) * 4, (5, 6))[0]]


def test_the_pages_remark_read_with_its_two_counters_swapped() -> None:
    # The remark: counter 0x48656c6c'6f46726f'6d536561'74746c65 and an OutputTensor of
    # {3,3,20,7219} "should be incremented by 324,855 ... resulting in a counter value of
    # 0x48656c6c'6f46726f'6d536561'746f776e". That value is 324,855 *less* than the first
    # (ASCII "HelloFromSeattle" and "HelloFromSeatown"): the page has them the wrong way
    # round. From the second, the counter advances to the first.
    before = 0x48656C6C6F46726F6D536561746F776E
    after = 0x48656C6C6F46726F6D53656174746C65
    assert after - before == 324_855 == -(-3 * 3 * 20 * 7219 // 4)
    out = generate([*words(before), 7, 8], [3, 3, 20, 7219])
    assert out["OutputStateTensor"].reshape(-1).tolist() == [*words(after), 7, 8]
    block = philox_block(tuple(words(before + 324_854)), (7, 8))
    assert out["OutputTensor"].reshape(-1)[-4:].tolist() == list(block)  # 1,299,420 = 4 * 324,855


def test_without_an_output_state_only_the_output_comes_back() -> None:
    out = generate([0] * 6, [1, 1, 1, 4], with_state=False)
    assert set(out) == {"OutputTensor"}
    assert out["OutputTensor"].reshape(-1).tolist() == list(KNOWN_ANSWERS[0][2])
