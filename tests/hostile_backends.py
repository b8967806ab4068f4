"""Backends that misbehave as an attacker's (or a badly broken) backend would, for
test_hostile.py: they end their process, kill it, hang, or break the contract at load time."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from dmlspec.backends import NumpyBackend


class Misbehaves(NumpyBackend):
    """The reference, except by the fill's value type: INT8 calls os._exit(0), INT16 kills its
    own process, UINT8 sleeps for an hour. With $MISBEHAVE_MARKERS (a folder), each only once:
    a marker file remembers it across the restarts."""

    name = "misbehaves"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        kind = str(operator["desc"].get("ValueDataType"))
        if kind in ("INT8", "INT16", "UINT8") and self._first(kind):
            if kind == "INT8":
                os._exit(0)
            if kind == "INT16":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(3600)
        return super().run(operator, inputs)

    @staticmethod
    def _first(kind: str) -> bool:
        markers = os.environ.get("MISBEHAVE_MARKERS")
        if markers is None:
            return True
        os.makedirs(markers, exist_ok=True)
        marker = os.path.join(markers, kind)
        if os.path.exists(marker):
            return False
        open(marker, "w").close()
        return True


class ExitsAlways(NumpyBackend):
    name = "exits"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        os._exit(0)


class Sleeps(NumpyBackend):
    name = "sleeps"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        time.sleep(3600)
        return {}


class RaisesHuge(NumpyBackend):
    name = "raises"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        raise KeyError("x" * 10_000_000)


class ReturnsGarbage(NumpyBackend):
    name = "garbage"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> Any:
        return {"OutputTensor": np.array([object()])}


class NoName:
    feature_level = "6_4"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {}


class NonsenseLevel:
    name = "nonsense"
    feature_level = "banana" * 10_000

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {}


class RaisingConstructor(NumpyBackend):
    def __init__(self) -> None:
        raise RuntimeError("no device here")


class GarbageExpectedFailures(NumpyBackend):
    name = "garbage-expected"
    expected_failures: ClassVar[list[Any]] = [1, "two", {"pattern": 3}]


class ExitsWhileLoading:
    name = "exits-while-loading"
    feature_level = "6_4"

    def __init__(self) -> None:
        os._exit(0)

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {}
