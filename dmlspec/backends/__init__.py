"""Backends: anything that runs operator JSON (see ARCHITECTURE.md, "Backend contract").

A backend has `name`, `feature_level` (the highest DirectML level it claims), optionally
`validates` (True if it rejects invalid operators itself), and
`run(operator, inputs) -> outputs`; it raises dmlspec.Unsupported for a case it does not
implement and dmlspec.InvalidOperator for an operator it rejects.

Backends are chosen by name (`jax`, `numpy`, `onnxruntime`), by `module:attr` (a class
is instantiated with no arguments), by packages under the entry-point group
`dmlspec.backends`, or by the environment variable DMLSPEC_BACKEND.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..limits import cut, quote

__all__ = [
    "Backend",
    "BackendLoadError",
    "JaxBackend",
    "NumpyBackend",
    "builtin_backends",
    "check_backend",
    "load_backend",
]

ENTRY_POINT_GROUP = "dmlspec.backends"
ENVIRONMENT_VARIABLE = "DMLSPEC_BACKEND"


@runtime_checkable
class Backend(Protocol):
    name: str
    feature_level: str

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> Mapping[str, Any]: ...


def _highest_level() -> str:
    from dmlspec_generated.validators.common import FEATURE_LEVELS

    level: str = FEATURE_LEVELS[-1]
    return level


class JaxBackend:
    """dmlspec's own JAX kernels; they validate every desc before running it."""

    name = "jax"
    validates = True

    def __init__(self, feature_level: str | None = None) -> None:
        self.feature_level = feature_level or _highest_level()

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        from .. import ops

        return ops.run(operator, inputs, self.feature_level)


class NumpyBackend:
    """The independent NumPy reference (the suites' oracle); it does not validate."""

    name = "numpy"
    validates = False

    def __init__(self, feature_level: str | None = None) -> None:
        self.feature_level = feature_level or _highest_level()

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        from .. import reference

        return reference.run(operator, inputs)


def _onnxruntime() -> Any:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as error:
        raise ValueError(
            f"the onnxruntime backend needs onnx and onnxruntime ({error}): "
            "pip install 'dmlspec[peers]'"
        ) from None
    from .onnxruntime.backend import OnnxRuntimeBackend

    return OnnxRuntimeBackend()


class BackendLoadError(ValueError):
    """A backend could not be loaded or does not keep the contract; the message is one line."""


def builtin_backends() -> dict[str, Callable[[], Any]]:
    return {"jax": JaxBackend, "numpy": NumpyBackend, "onnxruntime": _onnxruntime}


def load_backend(name: str | None = None) -> Any:
    """The backend called `name` (default: $DMLSPEC_BACKEND, else jax).

    Raises BackendLoadError, with one line saying why, when it cannot be loaded, its
    constructor fails or it lacks what the backend contract asks for."""
    chosen = name or os.environ.get(ENVIRONMENT_VARIABLE) or "jax"
    shown = quote(chosen)
    factory: Any
    try:
        if chosen in builtin_backends():
            factory = builtin_backends()[chosen]()
        elif ":" in chosen:
            module_name, _, attribute = chosen.partition(":")
            factory = getattr(importlib.import_module(module_name), attribute)
        else:
            found = [e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == chosen]
            if not found:
                known = sorted(
                    [*builtin_backends(), *(e.name for e in entry_points(group=ENTRY_POINT_GROUP))]
                )
                raise BackendLoadError(
                    f"unknown backend {shown}: use one of {', '.join(known)} or module:attr"
                )
            factory = found[0].load()
        backend = factory() if isinstance(factory, type) else factory
    except BackendLoadError:
        raise
    except (Exception, SystemExit) as error:  # the user's module, whatever it raises
        raise BackendLoadError(
            f"cannot load backend {shown}: {type(error).__name__}: {cut(str(error))}"
        ) from None
    check_backend(backend, chosen)
    return backend


def check_backend(backend: Any, chosen: str) -> None:
    """Raise BackendLoadError unless `backend` has what the contract asks for."""
    shown = quote(chosen)
    missing = [a for a in ("name", "feature_level", "run") if not hasattr(backend, a)]
    if missing:
        raise BackendLoadError(
            f"backend {shown} lacks {', '.join(missing)} (see the backend contract)"
        )
    if not isinstance(backend.name, str) or not backend.name:
        raise BackendLoadError(
            f"backend {shown}: name must be a non-empty string; got {quote(backend.name)}"
        )
    if not callable(backend.run):
        raise BackendLoadError(f"backend {shown}: run must be callable")
    from dmlspec_generated.validators.common import FEATURE_LEVELS

    level = backend.feature_level
    if not isinstance(level, str) or level.removeprefix("DML_FEATURE_LEVEL_") not in FEATURE_LEVELS:
        raise BackendLoadError(
            f"backend {shown}: feature_level must be one of {', '.join(FEATURE_LEVELS)}; "
            f"got {quote(level)}"
        )
    validates = getattr(backend, "validates", False)
    if not isinstance(validates, bool):
        raise BackendLoadError(
            f"backend {shown}: validates must be true or false; got {quote(validates)}"
        )
