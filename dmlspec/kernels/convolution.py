"""The convolution family as JAX (convolution, matrix multiplication, attention): one table of
functions, one primitive that runs them; so far GEMM.

`convolution` is the primitive their specs name. Floating inputs are accumulated in FLOAT32
(FLOAT16 too: DirectML's accumulation unless a backend runs with half precision allowed),
at XLA's highest precision (no reduced-precision passes on accelerators), and rounded once to
the output type after Alpha, Beta, the bias and the FusedActivation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .element_wise import fused_activation
from .indexing import member

__all__ = ["FUNCTIONS", "convolution"]

Array = jax.Array


def _accumulation(dtype: Any) -> Any:
    return jnp.float64 if jnp.dtype(dtype) == jnp.float64 else jnp.float32


def _gemm(
    a: Array,
    b: Array,
    c: Array | None,
    *,
    trans_a: str,
    trans_b: str,
    alpha: float,
    beta: float,
    output_type: str,
    activation: tuple[tuple[str, Any], ...] | None = None,
) -> Array:
    """Output = FusedActivation(Alpha * TransA(A) x TransB(B) + Beta * C), over the leading
    (batch, channel) dimensions."""
    wide = _accumulation(a.dtype)
    if member(trans_a, "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        a = jnp.swapaxes(a, -1, -2)
    if member(trans_b, "DML_MATRIX_TRANSFORM_") == "TRANSPOSE":
        b = jnp.swapaxes(b, -1, -2)
    batch = tuple(range(a.ndim - 2))
    product = lax.dot_general(
        a,
        b,
        (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)),
        precision=lax.Precision.HIGHEST,
        preferred_element_type=wide,
    )
    result = jnp.asarray(alpha, wide) * product
    if c is not None:
        result = result + jnp.asarray(beta, wide) * c.astype(wide)
    if activation:
        result = fused_activation(result, activation)
    return result.astype(output_type)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Array]] = {"GEMM": _gemm}


def convolution(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no convolution function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
