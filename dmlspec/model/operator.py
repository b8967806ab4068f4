"""The model of one spec/operators/*.json: `OperatorSpec` with its lookups, its `Alias`es and
the page sentences no constraint encodes yet (`Unencoded`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .base import Json, put
from .common import DocPage
from .constraints import Constraint
from .examples import Example, ExampleTensor
from .fields import Definition, Field
from .kernel import Kernel
from .semantics import Semantics
from .support import SupportRow

__all__ = ["SPEC_STATUSES", "Alias", "OperatorSpec", "Unencoded"]

SPEC_STATUSES = ("drafted", "curated")


@dataclass(frozen=True)
class Unencoded:
    """A normative sentence of a page that no constraint or support row encodes yet."""

    doc: str
    reason: str
    field: str | None = None  # the field whose description holds it; None for page-level text
    # True for a sentence that reads like a rule but constrains no desc (advice, run-time
    # behaviour); it is listed, and left out of the share of sentences encoded.
    informative: bool = False

    def to_json(self) -> Json:
        data: Json = {"doc": self.doc}
        put(data, "field", self.field)
        if self.informative:
            data["informative"] = True
        data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class Alias:
    operator_type: str
    struct: str
    note: str

    def to_json(self) -> Json:
        return {"operator_type": self.operator_type, "struct": self.struct, "note": self.note}


@dataclass(frozen=True)
class OperatorSpec:
    path: str
    schema: str
    name: str  # "SCATTER_ND"
    operator_type: str  # "DML_OPERATOR_SCATTER_ND"
    aliases: tuple[Alias, ...]
    struct: str
    summary: str
    introduced: str
    doc_pages: tuple[DocPage, ...]
    fields: tuple[Field, ...]
    definitions: tuple[Definition, ...]
    explicit_constraints: tuple[Constraint, ...]
    range_constraints: tuple[Constraint, ...]  # derived from the fields' ranges
    support: tuple[SupportRow, ...]
    semantics: Semantics | None
    kernel: Kernel | None
    examples: tuple[Example, ...]
    notes: tuple[str, ...] = ()
    status: str = "curated"  # "drafted": as `dmlspec draft` wrote it; "curated": edited by hand
    unencoded: tuple[Unencoded, ...] = ()

    @property
    def checked_kernel(self) -> Kernel:
        """The kernel, for code that runs operators; LookupError for one without a kernel."""
        if self.kernel is None:
            raise LookupError(f"{self.name} has no kernel yet (its spec has no 'kernel')")
        return self.kernel

    @property
    def checked_examples(self) -> tuple[Example, ...]:
        """The examples whose runnable form prints the kernel's output values: those a suite
        checks a backend against (LookupError for an operator without a kernel)."""
        output = self.checked_kernel.output
        return tuple(
            e
            for e in self.examples
            if isinstance(tensor := e.valid_form.as_dict().get(output), ExampleTensor)
            and tensor.values is not None
        )

    @property
    def checked_semantics(self) -> Semantics:
        """The semantics (comparison rules), for code that runs operators."""
        if self.semantics is None:
            raise LookupError(f"{self.name} has no semantics yet (its spec has no 'semantics')")
        return self.semantics

    @property
    def encoded_sentences(self) -> frozenset[str]:
        """The distinct doc sentences that constraints and field ranges encode."""
        return frozenset(sentence for c in self.constraints for sentence in c.doc)

    @cached_property  # read on every drawn desc; the spec is immutable
    def constraints(self) -> tuple[Constraint, ...]:
        """Every constraint, field ranges included, errors before requires, by number."""
        return tuple(
            sorted(self.explicit_constraints + self.range_constraints, key=lambda c: c.number)
        )

    @property
    def operator_types(self) -> tuple[str, ...]:
        return (self.operator_type, *(a.operator_type for a in self.aliases))

    def field(self, name: str) -> Field:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(f"{self.name} has no field {name!r}")

    @property
    def tensor_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.is_tensor)

    def constraint(self, constraint_id: str) -> Constraint:
        for candidate in self.constraints:
            if candidate.id == constraint_id:
                return candidate
        raise KeyError(f"{self.name} has no constraint {constraint_id!r}")

    def to_json(self) -> Json:
        data: Json = {
            "$schema": self.schema,
            "name": self.name,
            "status": self.status,
            "operator_type": self.operator_type,
            "aliases": [a.to_json() for a in self.aliases],
            "struct": self.struct,
            "summary": self.summary,
            "introduced": self.introduced,
            "doc_pages": [p.to_json() for p in self.doc_pages],
            "fields": [f.to_json() for f in self.fields],
            "definitions": [d.to_json() for d in self.definitions],
            "constraints": [c.to_json() for c in self.explicit_constraints],
            "support": [r.to_json() for r in self.support],
        }
        put(data, "semantics", None if self.semantics is None else self.semantics.to_json())
        put(data, "kernel", None if self.kernel is None else self.kernel.to_json())
        data["examples"] = [e.to_json() for e in self.examples]
        put(data, "unencoded", tuple(u.to_json() for u in self.unencoded))
        put(data, "notes", self.notes)
        return data
