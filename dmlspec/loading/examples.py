"""An operator's examples: their fields and tensors, the corrected forms, and the errata's
expected findings checked against what the loader can see itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import model as m
from .operator_base import OperatorBuilderBase
from .report import known

__all__ = ["ExamplesBuilder", "values_shape"]


class ExamplesBuilder(OperatorBuilderBase):
    def examples(self, fields: list[m.Field], constraint_ids: set[str]) -> tuple[m.Example, ...]:
        by_name = {f.name: f for f in fields}
        examples, seen = [], set()
        for i, raw in enumerate(self.data["examples"]):
            at: list[str | int] = ["examples", i]
            if raw["id"] in seen:
                self.report.at([*at, "id"], f"duplicate example id {raw['id']!r}")
            seen.add(raw["id"])
            sources = self.sources(raw["sources"], [*at, "sources"])
            as_written = self.example_fields(raw["as_written"], by_name, [*at, "as_written"])
            corrected = None
            if "corrected" in raw:
                corrected = self.example_fields(raw["corrected"], by_name, [*at, "corrected"])
                self.check_complete(corrected, fields, [*at, "corrected"])
            errata = tuple(m.Erratum(e["note"], tuple(e["expect"])) for e in raw.get("errata", []))
            if errata and corrected is None:
                self.report.at(at, "an example with errata needs a corrected form")
            self.check_expectations(as_written, errata, fields, constraint_ids, at)
            examples.append(
                m.Example(
                    id=raw["id"],
                    title=raw["title"],
                    sources=sources,
                    as_written=as_written,
                    errata=errata,
                    corrected=corrected,
                    notes=tuple(raw.get("notes", [])),
                )
            )
        return tuple(examples)

    def example_fields(
        self, raw: Mapping[str, Any], by_name: Mapping[str, m.Field], at: list[str | int]
    ) -> m.ExampleFields:
        items: list[tuple[str, m.ExampleValue]] = []
        for name, value in raw.items():
            field = by_name.get(name)
            if field is None:
                self.report.at([*at, name], f"unknown field {name!r} (fields: {known(by_name)})")
                continue
            if field.is_tensor_array:
                if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                    self.report.at([*at, name], f"{name} must be a list of tensor objects")
                    continue
                items.append((name, tuple(_example_tensor(v) for v in value)))
                continue
            if field.is_tensor != isinstance(value, dict):
                expected = "a tensor object" if field.is_tensor else "a scalar"
                self.report.at([*at, name], f"{name} must be {expected}")
                continue
            if isinstance(value, dict):
                items.append(
                    (
                        name,
                        m.ExampleTensor(
                            tuple(value["Sizes"]),
                            value.get("DataType"),
                            m._frozen(value.get("Values")),
                        ),
                    )
                )
            else:
                items.append((name, value))
        return m.ExampleFields(tuple(items))

    def check_complete(
        self, fields_given: m.ExampleFields, fields: list[m.Field], at: list[str | int]
    ) -> None:
        given = fields_given.as_dict()
        for field in fields:
            if not field.optional and field.name not in given:
                self.report.at(at, f"the corrected form lacks the required field {field.name}")
        for name, value in given.items():
            if not isinstance(value, m.ExampleTensor):
                continue
            if value.data_type is None:
                self.report.at([*at, name], "a corrected tensor must give its DataType")
            elif (
                value.data_type.removeprefix("DML_TENSOR_DATA_TYPE_")
                not in self.enum_infos[m.DATA_TYPE_ENUM].members
            ):
                self.report.at([*at, name, "DataType"], f"unknown data type {value.data_type!r}")
            if value.values is not None and values_shape(value.values) != value.sizes:
                self.report.at(
                    [*at, name, "Values"],
                    f"values of shape {values_shape(value.values)} "
                    f"do not fit Sizes {list(value.sizes)}",
                )

    def check_expectations(
        self,
        as_written: m.ExampleFields,
        errata: Sequence[m.Erratum],
        fields: list[m.Field],
        constraint_ids: set[str],
        at: list[str | int],
    ) -> None:
        """Errata findings the loader can verify itself; the rest name real things."""
        expected = {finding for erratum in errata for finding in erratum.expect}
        given = as_written.as_dict()
        field_names = {f.name for f in fields}
        actual_missing = {
            f"missing:{f.name}" for f in fields if not f.optional and f.name not in given
        }
        actual_misfit = {
            f"values:{name}"
            for name, value in given.items()
            if isinstance(value, m.ExampleTensor)
            and value.values is not None
            and values_shape(value.values) != value.sizes
        }
        sizes_only = all(
            isinstance(v, m.ExampleTensor) and v.values is None
            for v in given.values()
            if isinstance(v, m.ExampleTensor)
        )
        for finding in sorted(expected):
            kind, _, name = finding.partition(":")
            if finding in constraint_ids:
                continue
            if kind in ("support", "values", "missing", "warning") and name in field_names:
                continue
            self.report.at(
                [*at, "errata"],
                f"expected finding {finding!r} names no constraint or field of {self.name}",
            )
        if self.data["status"] == "drafted":
            return  # drafted examples are as the page prints them; curation adds the errata
        for finding in sorted(actual_misfit - expected):
            self.report.at(
                [*at, "as_written"],
                f"{finding.partition(':')[2]} values do not fit its Sizes, "
                f"but no erratum expects {finding!r}",
            )
        for finding in sorted(
            (expected - actual_misfit) & {e for e in expected if e.startswith("values:")}
        ):
            self.report.at(
                [*at, "errata"], f"erratum expects {finding!r}, but those values fit their Sizes"
            )
        if not sizes_only:
            for finding in sorted(actual_missing - expected):
                self.report.at(
                    [*at, "as_written"],
                    f"required field {finding.partition(':')[2]} is not given, "
                    f"but no erratum expects {finding!r}",
                )
        for finding in sorted({e for e in expected if e.startswith("missing:")} - actual_missing):
            self.report.at([*at, "errata"], f"erratum expects {finding!r}, but the field is given")


def _example_tensor(value: Mapping[str, Any]) -> m.ExampleTensor:
    return m.ExampleTensor(
        tuple(value["Sizes"]), value.get("DataType"), m._frozen(value.get("Values"))
    )


def values_shape(values: Any) -> tuple[int, ...] | None:
    """Shape of nested tuples of numbers; None when ragged."""
    if not isinstance(values, tuple):
        return ()
    shapes = {values_shape(v) for v in values}
    if len(shapes) > 1:
        return None
    inner = shapes.pop() if shapes else ()
    return None if inner is None else (len(values), *inner)
