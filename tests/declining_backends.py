"""Backends for test_hostile_writes.py and test_conformance.py: one that judges nothing, one
that is interrupted, one that claims a lower level."""

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


class ClaimsFive(NumpyBackend):
    """The reference claiming DML_FEATURE_LEVEL_5_0: a backend whose claim is below the
    catalog's highest level (test_conformance's raising of a claim)."""

    name = "claims-5_0"

    def __init__(self) -> None:
        super().__init__("5_0")
