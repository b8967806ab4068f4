"""dmlspec: machine-readable DirectML operator specs, and what is generated from them.

from dmlspec import load_catalog
catalog = load_catalog()
spec = catalog.operator("SCATTER")        # SCATTER_ELEMENTS, by its alias
[c.id for c in spec.constraints]
"""

from __future__ import annotations

import ml_dtypes  # noqa: F401  (registers NumPy's int4 and uint4: INT4 and UINT4 tensors)

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
