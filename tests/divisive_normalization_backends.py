"""Backends with the divisive normalizations' realistic bugs, for the suites' meta tests: each
runs the NumPy reference on a desc changed the way the bug changes it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend


def _kind(operator: Mapping[str, Any]) -> str:
    return str(operator["type"]).removeprefix("DML_OPERATOR_")


class UndividedAlpha(NumpyBackend):
    """LOCAL_RESPONSE_NORMALIZATION and its gradient scaling the sum of squares by Alpha, not
    Alpha / LocalSize (the other common LRN convention)."""

    name = "undivided-alpha"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _kind(operator).startswith("LOCAL_RESPONSE_NORMALIZATION"):
            return reference.run(operator, inputs)
        desc = dict(operator["desc"])
        desc["Alpha"] = float(np.float32(desc["Alpha"]) * np.float32(desc["LocalSize"]))
        return reference.run({**operator, "desc": desc}, inputs)


class SwappedNormOrder(NumpyBackend):
    """LP_NORMALIZATION dividing by the L2 norm where P is 1 and the L1 norm where it is 2."""

    name = "swapped-norm-order"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if _kind(operator) != "LP_NORMALIZATION":
            return reference.run(operator, inputs)
        desc = {**operator["desc"], "P": 3 - int(operator["desc"]["P"])}
        return reference.run({**operator, "desc": desc}, inputs)
