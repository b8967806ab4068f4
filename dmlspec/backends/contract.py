"""The backend contract (ARCHITECTURE.md, "Backend contract") and its check.

A backend has `name`, `feature_level` (the highest DirectML level it claims), optionally
`validates` (True if it rejects invalid operators itself), `execution_flags` and
`expected_failures`, and `run(operator, inputs) -> outputs`; it raises dmlspec.Unsupported
for a case it does not implement and dmlspec.InvalidOperator for an operator it rejects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..limits import quote

__all__ = [
    "Backend",
    "BackendLoadError",
    "check_backend",
    "execution_flags",
    "highest_feature_level",
]


@runtime_checkable
class Backend(Protocol):
    name: str
    feature_level: str

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> Mapping[str, Any]: ...


class BackendLoadError(ValueError):
    """A backend could not be loaded or does not keep the contract; the message is one line."""


def highest_feature_level() -> str:
    """The highest feature level the common spec knows."""
    from dmlspec_generated.validators.common import FEATURE_LEVELS

    level: str = FEATURE_LEVELS[-1]
    return level


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
    execution_flags(backend, chosen)


def execution_flags(backend: Any, chosen: str | None = None) -> tuple[str, ...]:
    """The DirectML execution flags the backend declares it runs with (`execution_flags`,
    default none), as DML_EXECUTION_FLAG_ names; BackendLoadError for anything else. The
    accuracy model reads them: FLOAT16 accumulates in FLOAT32 unless
    DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION is declared."""
    from dmlspec_generated.validators.common import ENUMS

    prefix, members = ENUMS["DML_EXECUTION_FLAGS"]
    declared = getattr(backend, "execution_flags", ())
    shown = quote(chosen or getattr(backend, "name", "?"))
    if isinstance(declared, str) or not isinstance(declared, list | tuple | frozenset | set):
        raise BackendLoadError(
            f"backend {shown}: execution_flags must be a list of DML_EXECUTION_FLAGS names; "
            f"got {quote(declared)}"
        )
    flags = []
    for flag in declared:
        name = flag.removeprefix(prefix) if isinstance(flag, str) else None
        if name not in members:
            raise BackendLoadError(
                f"backend {shown}: execution_flags: {quote(flag)} is not a DML_EXECUTION_FLAGS "
                f"member (known: {', '.join(prefix + m for m in members)})"
            )
        flags.append(prefix + name)
    return tuple(sorted(set(flags)))
