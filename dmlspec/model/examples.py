"""The pages' worked examples: `Example` as written and corrected, with its fields, tensors and
errata, and `example_field_value` (a printed scalar as operator JSON takes it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .base import Json, put
from .fields import Field

__all__ = [
    "Erratum",
    "Example",
    "ExampleFields",
    "ExampleTensor",
    "ExampleValue",
    "example_field_value",
]


def _frozen(value: Any) -> Any:
    """Nested lists as nested tuples, so example values are hashable like the rest."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _thawed(value: Any) -> Any:
    return [_thawed(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class ExampleTensor:
    sizes: tuple[int, ...]
    data_type: str | None = None  # missing only in sizes-only examples as written
    values: Any = None  # nested tuples, row-major, as printed; None when not given

    def to_json(self) -> Json:
        data: Json = {}
        put(data, "DataType", self.data_type)
        data["Sizes"] = list(self.sizes)
        if self.values is not None:
            data["Values"] = _thawed(self.values)
        return data


ExampleValue = ExampleTensor | tuple[ExampleTensor, ...] | int | float | str


_NAMED_LIMITS = {"INT32_MIN": -(2**31), "INT32_MAX": 2**31 - 1, "UINT32_MAX": 2**32 - 1}
_BRACED = re.compile(r"^\{\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*\}$")


def example_field_value(field: Field, value: ExampleValue) -> Any:
    """A scalar of an example as operator JSON takes it: pages print arrays as `{0, 1}` and
    BOOLs as `TRUE`/`FALSE`; every other value is kept as written."""
    if isinstance(value, str) and field.is_array:
        braced = _BRACED.match(value.strip())
        if braced is not None:
            return [int(x) for x in (braced.group(1) or "").split(",") if x.strip()]
    if isinstance(value, str) and field.kind == "bool" and value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    if isinstance(value, str) and field.kind in ("int", "uint") and value in _NAMED_LIMITS:
        return _NAMED_LIMITS[value]
    return value


def _example_json(value: ExampleValue) -> Any:
    if isinstance(value, ExampleTensor):
        return value.to_json()
    if isinstance(value, tuple):  # a tensor array
        return [item.to_json() for item in value]
    return value


@dataclass(frozen=True)
class ExampleFields:
    """Operator fields of an example, in the order the page gives them."""

    items: tuple[tuple[str, ExampleValue], ...]

    def __iter__(self) -> Iterator[tuple[str, ExampleValue]]:
        return iter(self.items)

    def as_dict(self) -> dict[str, ExampleValue]:
        return dict(self.items)

    def to_json(self) -> Json:
        return {name: _example_json(value) for name, value in self.items}


@dataclass(frozen=True)
class Erratum:
    note: str
    expect: tuple[str, ...]  # findings the as-written form must produce

    def to_json(self) -> Json:
        return {"note": self.note, "expect": list(self.expect)}


@dataclass(frozen=True)
class Example:
    id: str
    title: str | None
    sources: tuple[str, ...]
    as_written: ExampleFields
    errata: tuple[Erratum, ...] = ()
    corrected: ExampleFields | None = None
    notes: tuple[str, ...] = ()

    @property
    def valid_form(self) -> ExampleFields:
        """The form to run: the corrected one where the page's own is wrong or incomplete."""
        return self.corrected if self.corrected is not None else self.as_written

    def to_json(self) -> Json:
        data: Json = {
            "id": self.id,
            "title": self.title,
            "sources": list(self.sources),
            "as_written": self.as_written.to_json(),
        }
        put(data, "errata", tuple(e.to_json() for e in self.errata))
        put(data, "corrected", None if self.corrected is None else self.corrected.to_json())
        put(data, "notes", self.notes)
        return data
