"""What an operator computes and how a result is compared with the expected one: `Semantics`,
its `ComparisonRule`s, and where negative indices count from the end (`NegativeIndices`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..expr import Environment, Expression
from .base import Json, put

__all__ = ["ComparisonRule", "NegativeIndices", "Semantics"]


@dataclass(frozen=True)
class NegativeIndices:
    tensor: str
    since: str
    doc: str

    def to_json(self) -> Json:
        return {"tensor": self.tensor, "since": self.since, "doc": self.doc}


@dataclass(frozen=True)
class ComparisonRule:
    tensor: str
    data_type_kinds: tuple[str, ...]
    rule: str  # "exact" or "ulp"
    max_ulps: int | None = None
    reference: Expression | None = None  # expected value of element k, exactly
    ulp_scale: Expression | None = None  # None: the ULP of each expected element itself
    note: str | None = None
    data_types: tuple[str, ...] = ()  # only these data types of the kinds (empty: all)
    # also accept |actual - expected| <= this: a number, or an expression of the desc
    abs_tolerance: float | Expression | None = None
    source: str | None = None  # where the bound comes from
    when: Expression | None = None  # applies only to descs where this holds
    terms: Expression | None = None  # terms accumulated into each element (an upper bound)
    magnitude: str | None = None  # "output", "absolute_inputs", "log_of_sum" or "one"
    # the floating type whose ULP is the unit (the type computed in); None: the output's type
    ulps_of: str | None = None
    # dot_product: whether the error's variance and bias over the output are judged (False
    # where elements repeat one computation, so their errors are not independent)
    error_statistics: bool = True

    def applies_to(self, tensor: str, kind: str, data_type: str) -> bool:
        return (
            self.tensor == tensor
            and kind in self.data_type_kinds
            and (not self.data_types or data_type in self.data_types)
        )

    def holds_for(self, env: Environment | None) -> bool:
        """Whether the rule applies to the desc `env` binds (always, for a rule without `when`)."""
        if self.when is None:
            return True
        if env is None:
            raise ValueError(
                f"the comparison rule for {self.tensor} when {self.when.source!r} needs the "
                "desc's environment (binding.bind_desc) to decide whether it applies"
            )
        return bool(self.when.evaluate(env))

    def absolute_tolerance(self, env: Environment) -> float | None:
        """The absolute distance also accepted for the desc `env` binds (None: none)."""
        if isinstance(self.abs_tolerance, Expression):
            return float(self.abs_tolerance.evaluate(env))  # type: ignore[arg-type]
        return self.abs_tolerance

    def to_json(self) -> Json:
        data: Json = {
            "tensor": self.tensor,
            "data_type_kinds": list(self.data_type_kinds),
            "rule": self.rule,
        }
        put(data, "when", None if self.when is None else self.when.source)
        put(data, "data_types", self.data_types)
        put(data, "max_ulps", self.max_ulps)
        tolerance = self.abs_tolerance
        put(
            data,
            "abs_tolerance",
            tolerance.source if isinstance(tolerance, Expression) else tolerance,
        )
        put(data, "reference", None if self.reference is None else self.reference.source)
        put(data, "ulp_scale", None if self.ulp_scale is None else self.ulp_scale.source)
        put(data, "terms", None if self.terms is None else self.terms.source)
        put(data, "magnitude", self.magnitude)
        put(data, "ulps_of", self.ulps_of)
        put(data, "error_statistics", None if self.error_statistics else False)
        put(data, "source", self.source)
        put(data, "note", self.note)
        return data


@dataclass(frozen=True)
class Semantics:
    pseudocode: str
    comparison: tuple[ComparisonRule, ...]
    notes: tuple[str, ...] = ()
    negative_indices: NegativeIndices | None = None
    arithmetic: bool = False  # computes on values: a data type's subnormal rule applies

    def comparison_for(
        self, tensor: str, kind: str, data_type: str = "", env: Environment | None = None
    ) -> ComparisonRule:
        """The first rule for this tensor, data-type kind and (when rules name them) type
        whose `when` holds for the desc `env` binds (`binding.bind_desc`).

        Raises ValueError when a rule with `when` is reached and no `env` is given.
        """
        for rule in self.comparison:
            matches = rule.applies_to(tensor, kind, data_type) or (
                not data_type and rule.tensor == tensor and kind in rule.data_type_kinds
            )
            if matches and rule.holds_for(env):
                return rule
        raise KeyError(f"no comparison rule for {tensor} of kind {kind}")

    def to_json(self) -> Json:
        data: Json = {"pseudocode": self.pseudocode}
        put(data, "notes", self.notes)
        put(
            data,
            "negative_indices",
            None if self.negative_indices is None else self.negative_indices.to_json(),
        )
        data["comparison"] = [c.to_json() for c in self.comparison]
        if self.arithmetic:
            data["arithmetic"] = True
        return data
