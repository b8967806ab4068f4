"""Sweeps split between the default suite and the slow set.

A sweep runs one check over many variants (every broken backend of a family, each a whole
conformance run). The default suite keeps the first variants, so every kind of check still runs
on every change; the rest carry the `slow` mark and run with `python -m pytest -m slow`, which
CI runs after the default suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest


def sweep(variants: Iterable[Sequence[Any]], ids: Sequence[str], *, kept: int = 1) -> list[Any]:
    """Parameters for `pytest.mark.parametrize`: the first `kept` variants in the default suite,
    the others in the slow set."""
    return [
        pytest.param(*variant, id=name, marks=() if n < kept else pytest.mark.slow)
        for n, (variant, name) in enumerate(zip(variants, ids, strict=True))
    ]
