"""What a validation returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ValidationResult", "ValidationWarning", "Violation"]


@dataclass(frozen=True)
class Violation:
    """A broken rule: `constraint` is a spec id (SCATTER_ND.C8, TENSOR.C5) or a check id
    (JSON.required_field, LEVEL.operator, SUPPORT.data_type); `path` a JSON pointer."""

    constraint: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.constraint} {self.path or '/'}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"constraint": self.constraint, "path": self.path, "message": self.message}


@dataclass(frozen=True)
class ValidationWarning:
    """Valid, but maybe not what was meant (a scalar its data type reads differently)."""

    field: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"warning {self.path}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "path": self.path, "message": self.message}


@dataclass(frozen=True)
class ValidationResult:
    operator: str | None  # DML_OPERATOR_* as recognised, None if not recognised
    feature_level: str
    violations: tuple[Violation, ...]
    warnings: tuple[ValidationWarning, ...]

    @property
    def valid(self) -> bool:
        return not self.violations

    def fired(self) -> tuple[str, ...]:
        """Ids of the broken rules, in reporting order, each once."""
        return tuple(dict.fromkeys(v.constraint for v in self.violations))

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "violations": [v.to_json() for v in self.violations],
            "warnings": [w.to_json() for w in self.warnings],
        }
