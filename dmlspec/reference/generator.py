"""The generator family, written from the DirectML pages: operators that fill an output from
their fields (and at most one input). FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX,
DIAGONAL_MATRIX1 and RANDOM_GENERATOR.

FILL_VALUE_SEQUENCE:

    for each coordinate in OutputTensor
        OutputTensor[coordinate] = Value
        Value += Delta
    endfor

Computed exactly (element k is start + k * delta in rational arithmetic), then stored in the
output type: integers modulo 2^bits, floats rounded to nearest.

RANDOM_GENERATOR with DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10, written from
its page and the Philox paper (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As Easy
as 1, 2, 3", SC11; the Random123 library's philox4x32-10).

The state tensor: "The first four 32-bit values contain a monotonically increasing 128-bit
counter. The last two 32-bit values contain the 64-bit key value." The page does not say in
which order the four words make the counter; the reference reads element 0 as its least
significant word (a 128-bit integer in a little-endian buffer, and Random123's layout, where
ctr.v[0] is the word that counts first), and elements 4 and 5 as the key words v[0], v[1].

OutputTensor: Philox4x32-10 of counter + j gives four 32-bit words, the output elements 4j
to 4j + 3 in row-major order (the last block's extra words are not written). OutputStateTensor:
"the 128-bit counter should be incremented by ceil(outputSize / 4)" (modulo 2^128), the key
unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import InvalidOperator
from .data_movement import FLOAT_FIELD_NOTE
from .fields import Fields, Inputs, Operator, Outputs, float_parameter, right_aligned
from .tensors import WriteLog

__all__ = ["GENERATORS", "UNDEFINED_NOTES", "philox4x32_10"]

# The paper's constants for Philox4x32: the round multipliers and the Weyl key increments.
PHILOX_M4x32_0 = 0xD2511F53
PHILOX_M4x32_1 = 0xCD9E8D57
PHILOX_W32_0 = 0x9E3779B9
PHILOX_W32_1 = 0xBB67AE85
_WORD = 0xFFFFFFFF


def philox4x32_10(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32 with 10 rounds of each counter (rows of four 32-bit words v[0..3]) under
    `key` (v[0], v[1]); returns the rows of four output words.

    One round: hi0:lo0 = M0 * v[0] and hi1:lo1 = M1 * v[2] (64-bit products), then
    v = {hi1 ^ v[1] ^ key[0], lo1, hi0 ^ v[3] ^ key[1], lo0}. Between rounds the key is
    bumped by the Weyl constants (key[0] += W0, key[1] += W1, modulo 2^32)."""
    v = [np.asarray(counters[:, j], dtype=np.uint64) for j in range(4)]
    k0, k1 = key[0] & _WORD, key[1] & _WORD
    for round_number in range(10):
        if round_number > 0:
            k0, k1 = (k0 + PHILOX_W32_0) & _WORD, (k1 + PHILOX_W32_1) & _WORD
        product0 = v[0] * np.uint64(PHILOX_M4x32_0)  # < 2^64: exact in uint64
        product1 = v[2] * np.uint64(PHILOX_M4x32_1)
        hi0, lo0 = product0 >> np.uint64(32), product0 & np.uint64(_WORD)
        hi1, lo1 = product1 >> np.uint64(32), product1 & np.uint64(_WORD)
        v = [hi1 ^ v[1] ^ np.uint64(k0), lo1, hi0 ^ v[3] ^ np.uint64(k1), lo0]
    return np.stack(v, axis=1).astype(np.uint32)


def _words(value: int, count: int) -> list[int]:
    """An integer as `count` 32-bit words, least significant first."""
    return [(value >> (32 * j)) & _WORD for j in range(count)]


def _counters(counter: int, blocks: int) -> np.ndarray:
    """Rows of the four words of counter, counter + 1, ..., counter + blocks - 1 (mod 2^128)."""
    offsets = np.arange(blocks, dtype=np.uint64)
    low = np.uint64(counter & 0xFFFFFFFFFFFFFFFF) + offsets  # wraps modulo 2^64 ...
    carry = (low < offsets).astype(np.uint64)  # ... and a wrap carries into the high half
    high = np.uint64(counter >> 64) + carry
    words = [low & np.uint64(_WORD), low >> np.uint64(32), high & np.uint64(_WORD)]
    words.append(high >> np.uint64(32))
    return np.stack(words, axis=1)


def random_generator(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """RANDOM_GENERATOR: OutputTensor's pseudo-random bits and, when the desc gives
    OutputStateTensor, the state with its counter advanced by ceil(outputSize / 4)."""
    if f.enum("Type") != "PHILOX_4X32_10":
        raise InvalidOperator(f"RANDOM_GENERATOR has no generator {f.raw('Type')!r}")
    state = [int(w) for w in np.asarray(x["InputStateTensor"]).reshape(-1)]
    if len(state) != 6:
        raise InvalidOperator(
            f"RANDOM_GENERATOR's InputStateTensor must hold 6 UINT32 values (Philox "
            f"4x32-10's counter and key); got {len(state)}"
        )
    counter = sum((w & _WORD) << (32 * j) for j, w in enumerate(state[:4]))
    key = (state[4], state[5])
    sizes, dtype = f.sizes("OutputTensor"), f.dtype("OutputTensor")
    count = int(np.prod(sizes))
    blocks = -(-count // 4)
    bits = philox4x32_10(_counters(counter, blocks), key).reshape(-1)[:count]
    outputs: dict[str, Any] = {"OutputTensor": bits.reshape(sizes).astype(dtype)}
    if f.present("OutputStateTensor"):
        advanced = (counter + blocks) % (1 << 128)
        new_state = np.array([*_words(advanced, 4), state[4], state[5]], dtype=np.uint64)
        new_state = new_state.astype(f.dtype("OutputStateTensor"))
        sizes = f.sizes("OutputStateTensor")
        outputs["OutputStateTensor"] = right_aligned(new_state, sizes, f, "OutputStateTensor")
    return outputs


def _rows_and_columns(sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each element's y and x in its 2-D matrix ("Any leading dimensions before the last two
    are treated as a batch count"); a 1-D tensor is one row."""
    grid = np.indices(tuple(sizes), dtype=np.int64)
    if len(sizes) < 2:
        return np.zeros(tuple(sizes), dtype=np.int64), grid[-1]
    return grid[-2], grid[-1]


def diagonal_matrix(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """DIAGONAL_MATRIX: "OutputTensor[coordinate] = if (coordinate.y + Offset ==
    coordinate.x) then Value else 0"; Value is a FLOAT ("might be truncated")."""
    sizes, dtype = f.sizes("OutputTensor"), f.dtype("OutputTensor")
    y, column = _rows_and_columns(sizes)
    value = float_parameter(f.float32("Value"), dtype)
    output = np.zeros(sizes, dtype=dtype)
    output[y + f.integer("Offset") == column] = value
    return {"OutputTensor": output}


def diagonal_matrix1(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """DIAGONAL_MATRIX1, the page's pseudocode: topX = coordinate.x - coordinate.y;
    useValue = (DiagonalFillEnd >= DiagonalFillBegin) ^ (topX >= DiagonalFillBegin) ^
    (topX < DiagonalFillEnd); Value there, else InputTensor's element (when given) or 0."""
    sizes, dtype = f.sizes("OutputTensor"), f.dtype("OutputTensor")
    begin, end = f.integer("DiagonalFillBegin"), f.integer("DiagonalFillEnd")
    y, column = _rows_and_columns(sizes)
    top_x = column - y
    use_value = (end >= begin) ^ (top_x >= begin) ^ (top_x < end)
    if "InputTensor" in x:
        output = np.array(right_aligned(np.asarray(x["InputTensor"]), sizes, f, "InputTensor"))
        output = output.astype(dtype)
    else:
        output = np.zeros(sizes, dtype=dtype)
    output[use_value] = np.asarray(f.scalar("Value", "ValueDataType")).astype(dtype)
    return {"OutputTensor": output}


def fill_value_constant(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """FILL_VALUE_CONSTANT: every element is Value, a DML_SCALAR_UNION read as ValueDataType."""
    sizes, dtype = f.sizes("OutputTensor"), f.dtype("OutputTensor")
    value = np.asarray(f.scalar("Value", "ValueDataType")).astype(dtype)
    return {"OutputTensor": np.full(sizes, value, dtype=dtype)}


def held(value: int | float, dtype: np.dtype[Any]) -> int | Fraction:
    """The value a DML_SCALAR_UNION of this type holds when set to `value`."""
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        wrapped = int(value) % (1 << bits)
        if dtype.kind == "i" and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return wrapped
    return Fraction(float(np.array(value).astype(dtype)))


def store(value: int | Fraction, dtype: np.dtype[Any]) -> Any:
    if dtype.kind in "iu":
        return held(int(value), dtype)
    return np.array(float(value)).astype(dtype)


def _fill_value_sequence(
    sizes: Sequence[int], dtype: np.dtype[Any], start: int | float, delta: int | float
) -> np.ndarray:
    output = np.empty(tuple(sizes), dtype=dtype)
    first, step = held(start, dtype), held(delta, dtype)
    for k, coordinate in enumerate(np.ndindex(*sizes)):
        output[coordinate] = store(first + k * step, dtype)
    return output


def fill_value_sequence(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    output = _fill_value_sequence(
        f.sizes("OutputTensor"), f.dtype("OutputTensor"), f.desc["ValueStart"], f.desc["ValueDelta"]
    )
    return {"OutputTensor": output}


GENERATORS: dict[str, Operator] = {
    "DIAGONAL_MATRIX": diagonal_matrix,
    "DIAGONAL_MATRIX1": diagonal_matrix1,
    "FILL_VALUE_CONSTANT": fill_value_constant,
    "FILL_VALUE_SEQUENCE": fill_value_sequence,
    "RANDOM_GENERATOR": random_generator,
}

UNDEFINED_NOTES = {
    "DIAGONAL_MATRIX": FLOAT_FIELD_NOTE,
    "RANDOM_GENERATOR": (
        "The page does not say in which order the state's four counter words make the 128-bit "
        "counter, nor how the four words of a Philox block fill the output; the reference reads "
        "element 0 as the least significant word (Random123's ctr.v[0]) and element 4 as key "
        "word 0, and writes block j's words v[0..3] to output elements 4j..4j+3, row-major. "
        "The remark's example counters are swapped (the second is the first minus 324,855)."
    ),
}
