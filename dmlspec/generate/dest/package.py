"""Emit the package files of generated/: the registry of validators."""

from __future__ import annotations

from ...model import Catalog
from ..header import python_header
from ..pysource import docstring, q
from .validators import module_name

__all__ = [
    "all_lines",
    "import_lines",
    "registry_entry",
    "render_package",
    "render_validators_package",
]


def registry_entry(key: str, module: str) -> list[str]:
    """`    "KEY": module,`, the value on a line of its own when the entry is too long."""
    single = f"    {q(key)}: {module},"
    return [single] if len(single) <= 100 else [f"    {q(key)}: (", f"        {module}", "    ),"]


def all_lines(names: list[str]) -> list[str]:
    single = f"__all__ = [{', '.join(q(n) for n in names)}]"
    if len(single) <= 100:
        return [single]
    return ["__all__ = [", *[f"    {q(n)}," for n in names], "]"]


def import_lines(modules: list[str]) -> list[str]:
    """`from . import a, b` on one line when it fits, else one module per line (isort style)."""
    single = f"from . import {', '.join(modules)}"
    if len(single) <= 100:
        return [single]
    return ["from . import (", *[f"    {module}," for module in modules], ")"]


def render_package(catalog: Catalog) -> str:
    lines = python_header(["spec/"]).splitlines()
    lines += docstring(
        "Code generated from spec/ by dmlspec (importable as dmlspec_generated).\n\n"
        "validators: one validator module per operator, and a registry by operator type.",
        0,
    )
    return "\n".join(lines) + "\n"


def render_validators_package(catalog: Catalog) -> str:
    modules = sorted(module_name(spec) for spec in catalog.operators)
    lines = python_header(sorted(spec.path for spec in catalog.operators)).splitlines()
    lines += docstring(
        "Generated validators, one module per operator; VALIDATORS maps every DML_OPERATOR_* "
        "name (aliases included) to its module.",
        0,
    )
    lines += ["", "from __future__ import annotations", "", "from types import ModuleType", ""]
    lines += import_lines(modules)
    lines += ["", "VALIDATORS: dict[str, ModuleType] = {"]
    for spec in sorted(catalog.operators, key=lambda s: s.name):
        for operator_type in spec.operator_types:
            lines += registry_entry(operator_type, module_name(spec))
    lines += ["}", "", *all_lines(["VALIDATORS", *modules])]
    return "\n".join(lines) + "\n"
