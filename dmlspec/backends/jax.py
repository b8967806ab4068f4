"""The `jax` backend: dmlspec's own JAX kernels (dmlspec.ops)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .contract import highest_feature_level

__all__ = ["JaxBackend"]


class JaxBackend:
    """dmlspec's own JAX kernels; they validate every desc before running it."""

    name = "jax"
    validates = True

    def __init__(self, feature_level: str | None = None) -> None:
        self.feature_level = feature_level or highest_feature_level()

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        from .. import ops

        return ops.run(operator, inputs, self.feature_level)
