"""Validate operator JSON against the generated validators.

from dmlspec.validation import validate_operator
result = validate_operator({"type": "SCATTER", "desc": {...}}, feature_level="3_0")
result.valid, [v.constraint for v in result.violations]
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..limits import quote
from .engine import RequiresReport, normalise_level, requires_hold_with
from .result import ValidationResult, ValidationWarning, Violation
from .shape import operator_type_of

__all__ = [
    "RequiresReport",
    "ValidationResult",
    "ValidationWarning",
    "Violation",
    "check_requires",
    "closest_operator_types",
    "known_operator_types",
    "requires_hold",
    "validate_operator",
    "validator_for",
]


def _validators() -> dict[str, ModuleType]:
    from dmlspec_generated.validators import VALIDATORS

    validators: dict[str, ModuleType] = VALIDATORS
    return validators


def known_operator_types() -> list[str]:
    return sorted(_validators())


def validator_for(operator: object) -> ModuleType | None:
    """The generated validator module for an operator JSON's type, or None."""
    return _validators().get(operator_type_of(operator) or "")


def validate_operator(operator: object, feature_level: str | None = None) -> ValidationResult:
    """Validate any operator dmlspec knows; an unknown or missing type is a violation."""
    module = validator_for(operator)
    if module is not None:
        result: ValidationResult = module.validate(operator, feature_level)
        return result
    from dmlspec_generated.validators.common import COMMON

    level = normalise_level(COMMON, feature_level)
    declared = operator.get("type") if isinstance(operator, Mapping) else None
    if not isinstance(operator, Mapping):
        problem = Violation(
            "JSON.type", "", "an operator must be a JSON object with 'type' and 'desc'"
        )
    elif declared is None:
        problem = Violation("JSON.required_field", "/type", "'type' must name the operator")
    else:
        problem = Violation(
            "OPERATOR.unknown",
            "/type",
            f"{quote(declared)} is not a DirectML operator type dmlspec knows "
            f"({_known_count()} operators known, with or without the DML_OPERATOR_ prefix: "
            f"`dmlspec list` shows them{_suggestion(declared)})",
        )
    return ValidationResult(None, level, (problem,), ())


def _known_count() -> int:
    """Operators, not names: an alias (SCATTER for SCATTER_ELEMENTS) shares its validator."""
    return len({id(module) for module in _validators().values()})


def _suggestion(declared: object) -> str:
    close = [t.removeprefix("DML_OPERATOR_") for t in closest_operator_types(declared)]
    return f"; did you mean {', '.join(close)}?" if close else ""


def closest_operator_types(declared: object, n: int = 3) -> list[str]:
    """The few known operator types closest to `declared`, closest first (none for a type
    nothing resembles, or one that is no string)."""
    import difflib

    if not isinstance(declared, str) or len(declared) > 200:
        return []
    short = declared.removeprefix("DML_OPERATOR_").upper()
    full = {t.removeprefix("DML_OPERATOR_"): t for t in known_operator_types()}
    return [full[c] for c in difflib.get_close_matches(short, list(full), n=n, cutoff=0.75)]


def check_requires(
    operator: object, inputs: Mapping[str, Any], feature_level: str | None = None
) -> RequiresReport:
    """Check the data preconditions of a valid operator against input arrays."""
    module = validator_for(operator)
    if module is None:
        from ..errors import InvalidOperator

        raise InvalidOperator(
            f"dmlspec has no spec for operator type {quote(operator_type_of(operator))}"
        )
    report: RequiresReport = module.check_requires(operator, inputs, feature_level)
    return report


def requires_hold(
    operator: object, inputs: Mapping[str, Any], feature_level: str | None = None
) -> bool:
    """Whether every data precondition of a valid operator holds for these inputs (what
    `check_requires(...).satisfied` says, without making its messages and masks)."""
    module = validator_for(operator)
    if module is None:
        return check_requires(operator, inputs, feature_level).satisfied  # raises, naming it
    return requires_hold_with(module.TABLE, module.COMMON, operator, inputs, feature_level)
