"""The `numpy` backend: the independent NumPy reference (dmlspec.reference), the suites' oracle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .contract import highest_feature_level

__all__ = ["NumpyBackend"]


class NumpyBackend:
    """The independent NumPy reference (the suites' oracle); it does not validate."""

    name = "numpy"
    validates = False

    def __init__(self, feature_level: str | None = None) -> None:
        self.feature_level = feature_level or highest_feature_level()

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        from .. import reference

        return reference.run(operator, inputs)
