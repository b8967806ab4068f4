"""The generator family as JAX: one table of functions, one primitive that runs them.

`generator` is the primitive the FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DIAGONAL_MATRIX* and
RANDOM_GENERATOR specs name: operators that fill an output from their fields (and at most one
input) rather than transform an input. The kernel section gives the output's sizes and data
type as static parameters. RANDOM_GENERATOR returns (OutputTensor, OutputStateTensor): the
updated state is always computed, and dropped by the runtime when the desc leaves it out.

RANDOM_GENERATOR is Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
3", SC11; Random123's philox4x32_R(10)), in uint32 arithmetic, bit-exact: state elements 0..3
are the 128-bit counter, element 0 its least significant word, and elements 4, 5 the key
(element 4 the first key word). Output element 4j + w is word w of the generator applied to
counter + j (j = 0 .. ceil(n / 4) - 1, a 128-bit addition); the output state is the input
state with the counter advanced by ceil(n / 4), n being the output's element count (the
page's remark).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .indexing import field_value, member, union_value

__all__ = ["FUNCTIONS", "fill_value_sequence", "generator", "philox4x32"]

Array = jax.Array

# Philox 4x32 multipliers and Weyl key increments (Random123, philox.h).
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUNDS = 10


def _fill_value_constant(
    *, sizes: tuple[int, ...], dtype: str, value: int | float, value_type: str
) -> Array:
    """Every element is Value, read through ValueDataType."""
    return jnp.full(sizes, union_value(value, value_type).astype(dtype))


def _matrix_offsets(sizes: tuple[int, ...]) -> Array:
    """x - y of each element of a stack of matrices (the last two dimensions)."""
    y = lax.broadcasted_iota(jnp.int64, sizes, len(sizes) - 2)
    x = lax.broadcasted_iota(jnp.int64, sizes, len(sizes) - 1)
    return x - y


def _diagonal_matrix(*, sizes: tuple[int, ...], dtype: str, offset: int, value: float) -> Array:
    """Value where y + Offset == x, 0 elsewhere (a FLOAT Value truncates for integer types)."""
    fill = jnp.asarray(field_value(value, dtype))
    return jnp.where(_matrix_offsets(sizes) == offset, fill, jnp.zeros((), dtype))


def _diagonal_matrix1(
    input: Array | None,
    *,
    sizes: tuple[int, ...],
    dtype: str,
    value: int | float,
    value_type: str,
    begin: int,
    end: int,
) -> Array:
    """Value on the diagonals x - y in [DiagonalFillBegin, DiagonalFillEnd) (outside it when
    the range is inverted), the input (or 0 without one) elsewhere: the page's pseudocode."""
    top_x = _matrix_offsets(sizes)
    use_value = (end >= begin) ^ (top_x >= begin) ^ (top_x < end)
    fill = jnp.asarray(union_value(value, value_type).astype(dtype))
    other = jnp.zeros((), dtype) if input is None else input.astype(dtype)
    return jnp.where(use_value, fill, other)


def _mulhilo(multiplier: int, x: Array) -> tuple[Array, Array]:
    """The high and low 32-bit words of multiplier * x (x uint32)."""
    product = jnp.uint64(multiplier) * x.astype(jnp.uint64)
    return (product >> jnp.uint64(32)).astype(jnp.uint32), product.astype(jnp.uint32)


def philox4x32(counter: tuple[Array, ...], key: tuple[Array, Array]) -> tuple[Array, ...]:
    """Philox 4x32-10: four uint32 words of counter, two of key -> four uint32 words."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for round_ in range(PHILOX_ROUNDS):
        if round_:
            k0 = k0 + jnp.uint32(PHILOX_W0)
            k1 = k1 + jnp.uint32(PHILOX_W1)
        hi0, lo0 = _mulhilo(PHILOX_M0, c0)
        hi1, lo1 = _mulhilo(PHILOX_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def _add_to_counter(words: Array, amount: Array) -> tuple[Array, ...]:
    """The 128-bit counter (four uint32 words, least significant first) plus a uint64 amount
    (broadcast), wrapping modulo 2^128, as four uint32 words."""
    w = [words[i].astype(jnp.uint64) for i in range(4)]
    shift = jnp.uint64(32)
    low = w[0] | (w[1] << shift)
    total = low + amount
    carry = (total < low).astype(jnp.uint64)
    high = (w[2] | (w[3] << shift)) + carry
    return tuple(part.astype(jnp.uint32) for part in (total, total >> shift, high, high >> shift))


def _random_generator(
    input_state: Array, *, sizes: tuple[int, ...], generator_type: str = "PHILOX_4X32_10"
) -> tuple[Array, Array]:
    kind = member(generator_type, "DML_RANDOM_GENERATOR_TYPE_")
    if kind != "PHILOX_4X32_10":
        raise ValueError(f"no random generator type {generator_type!r} (known: PHILOX_4X32_10)")
    state = input_state.reshape(-1).astype(jnp.uint32)
    if state.size < 6:  # a state too short (an invalid desc) reads zeros, never past its end
        state = jnp.pad(state, (0, 6 - state.size))
    count = math.prod(sizes)
    blocks = -(-count // 4)
    counters = _add_to_counter(state[:4], lax.iota(jnp.uint64, blocks))
    words = philox4x32(counters, (state[4], state[5]))
    output = jnp.stack(words, axis=-1).reshape(-1)[:count].reshape(sizes)
    advanced = jnp.stack(_add_to_counter(state[:4], jnp.uint64(blocks)))
    new_state = state.at[:4].set(advanced)[: input_state.size].reshape(input_state.shape)
    return output, new_state


def fill_value_sequence(
    *, sizes: tuple[int, ...], dtype: str, start: int | float, delta: int | float
) -> jax.Array:
    """Element k (row-major) is start + k * delta in `dtype`: integers wrap modulo 2^bits;
    floats are computed in float64 from k, never by a running sum, then rounded once."""
    count = math.prod(sizes)
    target = jnp.dtype(dtype)
    if jnp.issubdtype(target, jnp.integer):
        wide = jnp.uint64
        k = lax.iota(wide, count)
        # Two's complement: arithmetic modulo 2^64, then truncation to the type's bits.
        values = jnp.asarray(start % 2**64, wide) + k * jnp.asarray(delta % 2**64, wide)
        return values.astype(target).reshape(sizes)
    k = lax.iota(jnp.float64, count)
    values = jnp.asarray(start, jnp.float64) + k * jnp.asarray(delta, jnp.float64)
    return values.astype(target).reshape(sizes)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "DIAGONAL_MATRIX": _diagonal_matrix,
    "DIAGONAL_MATRIX1": _diagonal_matrix1,
    "FILL_VALUE_CONSTANT": _fill_value_constant,
    "FILL_VALUE_SEQUENCE": fill_value_sequence,
    "RANDOM_GENERATOR": _random_generator,
}


def generator(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one generator operator: its input (if it has one; None when left out) and static
    parameters; one array, or RANDOM_GENERATOR's (output, output state)."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no generator function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
