"""The performance targets (issue "Performance"), checked against one run's medians."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .timing import Timing

__all__ = ["TARGETS", "Target", "check_targets"]


@dataclass(frozen=True)
class Target:
    case: str
    ours: str  # the dmlspec variant's name
    against: str  # a peer variant's name, "copy" (bandwidth) or "trivial" (call cost)
    limit: float  # time ratio at most (peer, trivial) or bandwidth fraction at least (copy)

    @property
    def text(self) -> str:
        if self.against == "copy":
            return f"{self.case}: {self.ours} >= {self.limit:.0%} of copy bandwidth"
        return f"{self.case}: {self.ours} <= {self.limit:g}x {self.against}"


USER_PATHS = ("ops.run, NumPy in", "NumPy in")  # NumPy arrays in, a fresh output

TARGETS = (
    *(Target("gather_nd_large", p, "onnxruntime GatherND", 1.0) for p in USER_PATHS),
    *(Target("scatter_nd_large", p, "onnxruntime ScatterND", 1.5) for p in USER_PATHS),
    *(Target("scatter_elements_large", p, "numpy put_along_axis", 1.0) for p in USER_PATHS),
    *(Target("fill_value_sequence_large", p, "numpy arange", 1.0) for p in USER_PATHS),
    Target("scatter_nd_large", "jax donated", "onnxruntime ScatterND", 0.5),
    Target("scatter_nd_large", "jax donated", "copy", 0.8),
    Target("gather_nd_large", "jax out=", "onnxruntime GatherND", 1.0),
    Target("gather_nd_large", "jax", "onnxruntime GatherND", 1.0),
    Target("scatter_elements_large", "jax donated", "torch scatter", 1.0),
    Target("fill_value_sequence_large", "jax out=", "numpy arange", 1.0),
    Target("fill_value_sequence_large", "jax out=", "copy", 0.5),
    Target("fill_value_sequence_large", "jax", "numpy arange", 1.0),
    *(
        Target(f"{name}_small", "jax", "trivial", 2.0)
        for name in ("scatter_nd", "gather_nd", "scatter_elements", "fill_value_sequence")
    ),
)


def check_targets(
    timings: dict[str, list[Timing]], copy_gbps: float, fault_seconds: float
) -> list[dict[str, Any]]:
    """Each target: met or missed, by how much, and the evidence that explains a miss."""
    results = []
    for target in TARGETS:
        if target.case not in timings:
            continue
        by_name = {(t.variant.name, t.variant.library): t for t in timings[target.case]}
        ours = by_name.get((target.ours, "dmlspec"))
        if ours is None:
            continue
        entry: dict[str, Any] = {"target": target.text}
        if ours.correct is False:
            entry.update(met=False, measured=f"{target.ours} computed a wrong output")
            results.append(entry)
            continue
        if target.against == "copy":
            fraction = ours.gigabytes_per_second / copy_gbps
            entry.update(value=fraction, met=fraction >= target.limit)
            entry["measured"] = f"{fraction:.0%} of copy bandwidth"
        else:
            if target.against == "trivial":
                other = next((t for t in timings[target.case] if t.variant.library == "jax"), None)
            else:
                # A peer's new-output form where it has an in-place one of the same name.
                named = [t for t in timings[target.case] if t.variant.name == target.against]
                named.sort(key=lambda t: t.variant.mode != "new output")
                other = named[0] if named else None
            if other is None:
                entry.update(met=None, measured=f"{target.against} not measured (not installed)")
                results.append(entry)
                continue
            ratio = ours.median / other.median
            entry.update(value=ratio, met=ratio <= target.limit)
            entry["measured"] = f"{ratio:.2f}x ({_ms(ours.median)} vs {_ms(other.median)})"
        if not entry["met"]:
            entry["evidence"] = _evidence(ours, timings[target.case], copy_gbps, fault_seconds)
        results.append(entry)
    return results


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _evidence(
    ours: Timing, case: list[Timing], copy_gbps: float, fault_seconds: float
) -> list[str]:
    notes = []
    faults = ours.faults_per_call
    if faults >= 1:
        spent = faults * fault_seconds
        notes.append(
            f"{faults:.0f} minor page faults per call, about {_ms(spent)} of its "
            f"{_ms(ours.median)} at {fault_seconds * 1e6:.2f} us per fault measured in this run"
        )
    notes.append(
        f"{ours.gigabytes_per_second:.1f} GB/s = {ours.gigabytes_per_second / copy_gbps:.0%} "
        "of copy bandwidth"
    )
    peers = [t for t in case if t.variant.library not in ("dmlspec", "jax") and t.correct]
    if peers:
        fastest = min(peers, key=lambda t: t.median)
        notes.append(
            f"fastest peer here: {fastest.variant.library} {fastest.variant.name} "
            f"({fastest.variant.mode}) at {fastest.gigabytes_per_second:.1f} GB/s = "
            f"{fastest.gigabytes_per_second / copy_gbps:.0%} of copy bandwidth, "
            f"{fastest.faults_per_call:.0f} faults per call"
        )
    return notes
