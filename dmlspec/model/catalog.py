"""`Catalog`: everything loaded from spec/, and the lookups across operators (by name or
operator type, the support row in force at a level, the level an operator set may hold one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from .common import CommonSpec, OperatorSet
from .operator import OperatorSpec
from .support import SupportRow

__all__ = ["Catalog"]


@dataclass(frozen=True)
class Catalog:
    """Everything loaded from spec/: the common facts and every operator, sorted by name."""

    common: CommonSpec
    operators: tuple[OperatorSpec, ...]

    def operator(self, name: str) -> OperatorSpec:
        """Look an operator up by name or DML_OPERATOR_ type, with or without the prefix."""
        found = self._operators_by_name.get(name.removeprefix("DML_OPERATOR_"))
        if found is not None:
            return found
        known = ", ".join(
            t.removeprefix("DML_OPERATOR_") for s in self.operators for t in s.operator_types
        )
        raise KeyError(f"unknown operator {name!r}; known operators: {known}")

    @cached_property  # looked up per test and per drawn case; the catalog is immutable
    def _operators_by_name(self) -> dict[str, OperatorSpec]:
        """Each name and operator type (prefix dropped) -> the first operator it names."""
        index: dict[str, OperatorSpec] = {}
        for spec in self.operators:
            for key in (spec.name, *(t.removeprefix("DML_OPERATOR_") for t in spec.operator_types)):
                index.setdefault(key, spec)
        return index

    def support_row_at(self, spec: OperatorSpec, level: str) -> SupportRow | None:
        """The support row in force at `level` ('and above' semantics), None below the first."""
        rank = self.common.feature_level(level).rank
        in_force = [
            r
            for r in spec.support
            if r.when is None and self.common.feature_level(r.feature_level).rank <= rank
        ]
        return in_force[-1] if in_force else None

    def held_from(self, operator_set: OperatorSet, member: str) -> str:
        """The level from which an operator-desc field of `operator_set` may hold `member`
        (LEVEL.operator_desc): the member's introduction, or later where the set's `since`
        says it joined the set later."""
        joined = dict(operator_set.since).get(member)
        levels = [self.operator(member).introduced, *([joined] if joined else [])]
        return max(levels, key=lambda level: self.common.feature_level(level).rank)

    @property
    def with_kernels(self) -> tuple[OperatorSpec, ...]:
        """The operators dmlspec can run (a kernel, semantics and comparison rules)."""
        return tuple(s for s in self.operators if s.kernel is not None and s.semantics is not None)

    def by_path(self) -> Mapping[str, OperatorSpec]:
        return {spec.path: spec for spec in self.operators}
