"""`dmlspec run-vectors`: run exported vectors on a backend, compare by the manifest's rules.

A strided output (its manifest entry has a `view`) is a whole buffer: the elements outside the
view must be bitwise those expected (the initial buffer's, unchanged), and the view is
compared by the rules like any output."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..compare import exact_mismatches, ulp_mismatches
from ..errors import InvalidOperator, Unsupported
from ..reference.layout import changed_outside_view, logical_view

__all__ = ["VectorResult", "run_vectors"]


@dataclass(frozen=True)
class VectorResult:
    id: str
    outcome: str  # passed, failed, skipped
    message: str = ""


def _scale(rule: dict[str, Any], operator: dict[str, Any], count: int) -> np.ndarray:
    from .. import load_catalog
    from ..binding import bind_desc

    catalog = load_catalog()
    spec = catalog.operator(operator["type"])
    comparison = next(
        c
        for c in spec.semantics.comparison
        if c.ulp_scale is not None and c.ulp_scale.source == rule["ulp_scale"]
    )
    env = bind_desc(catalog.common, spec, operator["desc"])
    env.values["k"] = np.arange(count, dtype=np.float64)  # every element at once
    values = comparison.ulp_scale.evaluate(env)  # type: ignore[union-attr]
    return np.broadcast_to(np.asarray(values, dtype=np.float64), (count,))


def run_vectors(
    folder: Path, backend: Any, progress: Callable[[VectorResult], None] | None = None
) -> list[VectorResult]:
    manifest = json.loads((folder / "manifest.json").read_text())
    results = []
    for entry in manifest["cases"]:
        case_dir = folder / entry["id"]
        model = json.loads((case_dir / "model.json").read_text())
        operator = model["dispatchables"]["operator"]
        bindings = model["commands"][0]["bindings"]
        inputs = {
            name: np.load(case_dir / f"{name}.npy")
            for name in bindings
            if (case_dir / f"{name}.npy").is_file()
        }
        result = _run_one(entry, case_dir, operator, inputs, backend)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def _run_one(
    entry: dict[str, Any],
    case_dir: Path,
    operator: dict[str, Any],
    inputs: dict[str, np.ndarray],
    backend: Any,
) -> VectorResult:
    try:
        outputs = backend.run(operator, inputs)
    except Unsupported as reason:
        return VectorResult(entry["id"], "skipped", str(reason))
    except InvalidOperator as error:
        return VectorResult(entry["id"], "failed", f"rejected a valid desc: {error}")
    except Exception as error:
        return VectorResult(entry["id"], "failed", f"{type(error).__name__}: {error}")
    for name, rules in entry["outputs"].items():
        expected = np.load(case_dir / rules["expected"])
        if name not in outputs:
            return VectorResult(entry["id"], "failed", f"no output {name}")
        actual = np.asarray(outputs[name])
        if actual.dtype != expected.dtype or actual.shape != expected.shape:
            return VectorResult(
                entry["id"],
                "failed",
                f"{name} is {actual.dtype}{list(actual.shape)}; "
                f"expected {expected.dtype}{list(expected.shape)}",
            )
        if "view" in rules:
            view = rules["view"]
            changed = changed_outside_view(expected, actual, view)
            if changed.size:
                return VectorResult(
                    entry["id"],
                    "failed",
                    f"{name}: {changed.size} buffer elements outside the strided view changed "
                    f"(first at {int(changed[0])})",
                )
            expected, actual = logical_view(expected, view), logical_view(actual, view)
        defined = np.ones(expected.shape, dtype=bool)
        if "undefined" in rules:
            defined &= ~np.load(case_dir / rules["undefined"]["mask"])
        flat_defined, flat_actual = defined.reshape(-1), actual.reshape(-1)
        for cell, allowed in rules.get("colliding_writes", {}).items():
            flat_defined[int(cell)] = False
            if flat_actual[int(cell)].tobytes()[::-1].hex() not in allowed:
                return VectorResult(
                    entry["id"], "failed", f"{name} cell {cell} holds none of the colliding writes"
                )
        if rules["rule"] == "ulp":
            mismatches = ulp_mismatches(
                expected,
                actual,
                _scale(rules, operator, expected.size).reshape(expected.shape),
                rules["max_ulps"],
                defined,
            )
        else:
            mismatches = exact_mismatches(expected, actual, defined)
        if mismatches:
            return VectorResult(entry["id"], "failed", f"{name} " + "; ".join(map(str, mismatches)))
    return VectorResult(entry["id"], "passed")
