"""Backends: anything that runs operator JSON (see ARCHITECTURE.md, "Backend contract", and
contract.py).

Backends are chosen by name: `jax` (jax.py: dmlspec's kernels), `numpy` (numpy.py: the
reference), `onnxruntime` (onnxruntime/: its CPU execution provider) or
`onnxruntime:PROVIDER[,KEY=VALUE...]` (any execution provider the installed onnxruntime has,
with provider options, e.g. `onnxruntime:DmlExecutionProvider,device_id=0`), by `module:attr`
(a class is instantiated with no arguments), by packages under the entry-point group
`dmlspec.backends`, or by the environment variable DMLSPEC_BACKEND.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from ..limits import cut, quote
from .contract import Backend, BackendLoadError, check_backend
from .jax import JaxBackend
from .numpy import NumpyBackend

__all__ = [
    "Backend",
    "BackendLoadError",
    "JaxBackend",
    "NumpyBackend",
    "builtin_backends",
    "check_backend",
    "is_builtin",
    "load_backend",
]

ENTRY_POINT_GROUP = "dmlspec.backends"
ENVIRONMENT_VARIABLE = "DMLSPEC_BACKEND"
ONNXRUNTIME_PREFIX = "onnxruntime:"


def _onnxruntime(provider: str | None = None) -> Any:
    """The onnxruntime backend, with the execution provider `provider` names (PROVIDER or
    PROVIDER,KEY=VALUE,...; default: the CPU provider)."""
    from ..extras import install_hint

    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as error:
        missing = getattr(error, "name", None) or "onnxruntime"
        raise BackendLoadError(
            f"the onnxruntime backend needs onnx and onnxruntime; {install_hint(missing)}"
        ) from None
    from .onnxruntime import OnnxRuntimeBackend
    from .onnxruntime.provider import ProviderError, parse_provider

    if provider is None:
        return OnnxRuntimeBackend()
    try:
        return OnnxRuntimeBackend(parse_provider(provider))
    except ProviderError as error:
        raise BackendLoadError(str(error)) from None


def builtin_backends() -> dict[str, Callable[[], Any]]:
    return {"jax": JaxBackend, "numpy": NumpyBackend, "onnxruntime": _onnxruntime}


def is_builtin(name: str) -> bool:
    """Whether `name` chooses one of dmlspec's own backends (onnxruntime with a provider too)."""
    return name in builtin_backends() or name.startswith(ONNXRUNTIME_PREFIX)


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
        elif chosen.startswith(ONNXRUNTIME_PREFIX):
            factory = _onnxruntime(chosen.removeprefix(ONNXRUNTIME_PREFIX))
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
                    f"unknown backend {shown}: use one of {', '.join(known)}, "
                    "onnxruntime:PROVIDER or module:attr"
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
