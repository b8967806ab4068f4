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


def fails_drawn_cases(backend: str, operators: Iterable[str], seeds: int = 40) -> None:
    """A broken backend fails one of the first `seeds` drawn cases of each operator, judged by
    the suites' own check (the quick default-suite form of a whole suite caught)."""
    from dmlspec.backends import load_backend
    from dmlspec.conformance.cases import draw_case
    from dmlspec.conformance.check import CaseFailure, run_case
    from dmlspec.reference.fields import catalog

    broken = load_backend(backend)
    for name in operators:
        spec = catalog().operator(name)
        for seed in range(seeds):
            try:
                run_case(catalog(), spec, broken, draw_case(catalog(), spec, "6_4", seed))
            except CaseFailure:
                break
        else:
            pytest.fail(f"{backend} passed {seeds} {name} cases")
