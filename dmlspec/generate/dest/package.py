"""Emit the package files of generated/: the registry of validators."""

from __future__ import annotations

from ...model import Catalog
from ..header import python_header
from ..pysource import docstring, q
from .validators import module_name

__all__ = ["render_package", "render_validators_package"]


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
    lines.append(f"from . import {', '.join(modules)}")
    lines += ["", "VALIDATORS: dict[str, ModuleType] = {"]
    for spec in sorted(catalog.operators, key=lambda s: s.name):
        for operator_type in spec.operator_types:
            lines.append(f"    {q(operator_type)}: {module_name(spec)},")
    exported = ", ".join(q(name) for name in ["VALIDATORS", *modules])
    lines += ["}", "", f"__all__ = [{exported}]"]
    return "\n".join(lines) + "\n"
