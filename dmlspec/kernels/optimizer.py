"""The optimizers as JAX; so far ADAM_OPTIMIZER, the page's formulas element by element.

`optimizer` is the primitive their specs name. Computed in FLOAT32 (FLOAT16 too, unless half
precision is allowed) and rounded once to the output type: the updated moments, the bias
correction from TrainingStepTensor's one value, and the parameters' update from the updated
moments, in the page's order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .indexing import member

__all__ = ["FUNCTIONS", "optimizer"]

Array = jax.Array


def _adam_optimizer(
    parameters: Array,
    first_moment: Array,
    second_moment: Array,
    gradient: Array,
    step: Array,
    *,
    learning_rate: float,
    beta1: float,
    beta2: float,
    epsilon: float,
    output_type: str,
) -> tuple[Array, Array, Array]:
    wide = jnp.float64 if jnp.dtype(parameters.dtype) == jnp.float64 else jnp.float32
    b1, b2 = jnp.asarray(beta1, wide), jnp.asarray(beta2, wide)
    one = jnp.asarray(1.0, wide)
    g = gradient.astype(wide)
    m = b1 * first_moment.astype(wide) + (one - b1) * g
    v = b2 * second_moment.astype(wide) + (one - b2) * g * g
    t = step.astype(wide).reshape(())
    alpha = jnp.sqrt(one - jnp.power(b2, t)) / (one - jnp.power(b1, t))
    update = (
        jnp.asarray(learning_rate, wide) * alpha * m / (jnp.sqrt(v) + jnp.asarray(epsilon, wide))
    )
    x = parameters.astype(wide) - update
    return x.astype(output_type), m.astype(output_type), v.astype(output_type)


# Every function of the family, by operator name.
FUNCTIONS: dict[str, Callable[..., Any]] = {"ADAM_OPTIMIZER": _adam_optimizer}


def optimizer(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order, static
    parameters by name."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no optimizer function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
