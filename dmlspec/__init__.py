"""dmlspec: machine-readable DirectML operator specs, and what is generated from them.

from dmlspec import load_catalog
catalog = load_catalog()
spec = catalog.operator("SCATTER")        # SCATTER_ELEMENTS, by its alias
[c.id for c in spec.constraints]
"""

from __future__ import annotations

from .errors import InvalidOperator, Problem, SpecError, Unsupported
from .loading import default_spec_dir, load_catalog

__all__ = [
    "InvalidOperator",
    "Problem",
    "SpecError",
    "Unsupported",
    "default_spec_dir",
    "load_catalog",
]
