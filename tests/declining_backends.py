"""Backends for test_hostile_writes.py: one that judges nothing, one that is interrupted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import Unsupported
from dmlspec.backends import NumpyBackend


class DeclinesEverything(NumpyBackend):
    """Raises Unsupported for every case: it implements nothing, so it may pass nothing."""

    name = "declines"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        raise Unsupported("nothing is implemented")


class Interrupted(NumpyBackend):
    """Raises KeyboardInterrupt from its run, as a backend stopped by its own signal handler."""

    name = "interrupted"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        raise KeyboardInterrupt
