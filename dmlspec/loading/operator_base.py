"""The state every part of the operator builder shares, and the checks they all make: feature
levels, tensor fields, data types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import model as m
from .base import Builder, unknown_level
from .report import Report, known

__all__ = ["OperatorBuilderBase"]


class OperatorBuilderBase(Builder):
    """One operator spec's builder, less its parts (`OperatorBuilder` joins them)."""

    def __init__(
        self, path: str, stem: str, data: Mapping[str, Any], common: m.CommonSpec, report: Report
    ) -> None:
        super().__init__(path, data, report)
        self.stem = stem
        self.common = common
        self.name = data["name"]
        self.level_ranks = {level.name: level.rank for level in common.feature_levels}
        self.enum_infos = common.enum_infos()

    def level(self, name: str, where: list[str | int]) -> bool:
        if name not in self.level_ranks:
            self.report.at(where, unknown_level(name, self.level_ranks))
            return False
        return True

    def tensor_field(
        self,
        fields: Sequence[m.Field],
        name: str,
        where: list[str | int],
        output: bool | None = None,
    ) -> m.Field | None:
        tensors = [
            f
            for f in fields
            if (f.is_tensor or f.is_tensor_array) and (output is None or f.is_output == output)
        ]
        for field in tensors:
            if field.name == name:
                return field
        what = {None: "tensor", True: "output tensor", False: "input tensor"}[output]
        article = "a" if output is None else "an"
        self.report.at(
            where,
            f"{name!r} is not {article} {what} field of {self.name} "
            f"({what} fields: {known(f.name for f in tensors)})",
        )
        return None

    def data_type_kind(self, name: str) -> str | None:
        try:
            return self.common.data_type(name).kind
        except KeyError:
            return None  # reported with the support row
