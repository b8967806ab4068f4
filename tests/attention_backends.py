"""Backends with realistic attention bugs, for the suites' meta tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dmlspec import reference
from dmlspec.backends import NumpyBackend


def _attention(operator: Mapping[str, Any]) -> bool:
    return str(operator["type"]).removeprefix("DML_OPERATOR_").startswith("MULTIHEAD_ATTENTION")


class ForgottenScale(NumpyBackend):
    """MULTIHEAD_ATTENTION that never multiplies the scores by Scale, otherwise the reference."""

    name = "forgotten-scale"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _attention(operator):
            return reference.run(operator, inputs)
        return reference.run({**operator, "desc": {**operator["desc"], "Scale": 1.0}}, inputs)


class ForgottenMask(NumpyBackend):
    """MULTIHEAD_ATTENTION that ignores MaskTensor, otherwise the reference."""

    name = "forgotten-mask"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _attention(operator):
            return reference.run(operator, inputs)
        desc = {k: v for k, v in operator["desc"].items() if k != "MaskTensor"}
        kept = {k: v for k, v in inputs.items() if k != "MaskTensor"}
        return reference.run({**operator, "desc": desc}, kept)
