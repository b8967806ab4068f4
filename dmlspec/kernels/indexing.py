"""Index and value helpers the kernel families share: DirectML's index rules, enum members,
and scalar fields converted to a tensor's type."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..expr.scalars import scalar_union_value

__all__ = ["field_value", "meaningful", "member", "positions", "union_value"]


def positions(indices: jax.Array, bounds: Any) -> tuple[jax.Array, jax.Array]:
    """Indices as int64 positions (negative ones counted from the end for signed types) and a
    mask of those inside [0, bound); `bounds` broadcasts against the indices."""
    bound = jnp.asarray(bounds, dtype=jnp.int64)
    if jnp.issubdtype(indices.dtype, jnp.unsignedinteger):
        # Compare before converting: a UINT64 above 2^63 would turn negative as int64.
        inside = indices < bound.astype(indices.dtype)
        wide = jnp.where(inside, indices, jnp.zeros((), indices.dtype)).astype(jnp.int64)
    else:
        wide = indices.astype(jnp.int64)
        wide = jnp.where(wide < 0, wide + bound, wide)
        inside = (wide >= 0) & (wide < bound)
    return wide, inside


def meaningful(array: jax.Array, count: int) -> jax.Array:
    """The trailing `count` dimensions of a right-aligned tensor (the leading ones are 1)."""
    return array.reshape(array.shape[array.ndim - count :])


def member(value: Any, prefix: str) -> str:
    """An enum member's short name, whether the desc writes it with its prefix or not."""
    return str(value).removeprefix(prefix)


def union_value(value: int | float, dtype: Any) -> np.ndarray:
    """A DML_SCALAR_UNION field as the member of `dtype` holds it (the spec's as_type)."""
    return np.array(scalar_union_value(value, dtype), dtype=np.dtype(dtype))


def field_value(value: float, dtype: Any) -> np.ndarray:
    """A FLOAT field (PaddingValue, Value) stored in a tensor of `dtype`: integer types take it
    truncated toward zero ("10.6 will become 10"), saturated at the type's limits, NaN as 0,
    as CAST converts; float types round to nearest."""
    target = np.dtype(dtype)
    if target.kind not in "iu":
        return np.array(value, dtype=target)
    info = np.iinfo(target)
    if math.isnan(value):
        return np.array(0, dtype=target)
    if math.isinf(value):
        return np.array(info.max if value > 0 else info.min, dtype=target)
    return np.array(min(max(math.trunc(value), int(info.min)), int(info.max)), dtype=target)
