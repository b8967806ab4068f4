"""The performance targets (issues "Performance" and 15), checked against one run's medians.

The seed operators' targets name their peer. Every family operator (cases.FAMILY_OPERATORS)
has the same ones: on its large case the user's first path ("numpy in": NumPy arrays in, a
fresh output) within 1.0x of the fastest peer that also makes a fresh output, and `out=`
within 1.0x of the fastest peer of all and at least 50% of the copy bandwidth (every one of
them is memory-bound: a few operations per element moved; even exp and softmax, whose
fastest peers run at 70-100% of the copy bandwidth on this machine); on its small case both
the first path and the device-array call at most 2x a trivial jitted call given the same kind
of input (a NumPy array for the first path: importing it is part of any call's floor).

The convolution family's cases (cases.FAMILY_CASES) are compute-bound, and what dmlspec can
promise there is to add nothing over XLA said plainly: the user's first path ("numpy in")
within 1.1x of plain XLA given the same NumPy arrays, and `out=` within 1.1x of plain XLA
writing into a donated buffer (same data types; families.py and cases/convolution.py).
onnxruntime's and torch's kernels are shown beside them as information, never as targets:
their convolutions and matrix multiplies are other libraries' code (MLAS, oneDNN), which
dmlspec, a layer over XLA, cannot change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels import host
from .accelerator import DeviceRates
from .cases import FAMILY_CASES, FAMILY_OPERATORS
from .families import KERNEL_JIT, ON_NUMPY_ARRAYS, PLAIN_XLA, is_plain_xla_on_numpy
from .timing import MiB, Timing, Variant
from .variants import IN_PLACE, NEW, TRIVIAL, TRIVIAL_NUMPY_IN

__all__ = [
    "BEST_NEW_PEER",
    "BEST_PEER",
    "PLAIN_XLA_NEW",
    "PLAIN_XLA_NUMPY_IN",
    "PLAIN_XLA_OUT",
    "SUITE_CASES_PER_SECOND",
    "SUITE_WORKERS",
    "TARGETS",
    "Target",
    "check_targets",
]

BEST_PEER = "best peer"  # the fastest correct peer variant, fresh output or in place
BEST_NEW_PEER = "best new-output peer"  # the fastest correct peer variant making a new output
PLAIN_XLA_NUMPY_IN = f"plain XLA {ON_NUMPY_ARRAYS}"  # its jax.jit given the NumPy arrays
PLAIN_XLA_OUT = "plain XLA out="  # its jax.jit writing into a donated buffer
PLAIN_XLA_NEW = "plain XLA"  # its jax.jit on device arrays, a fresh output
PLAIN_XLA_LIMIT = 1.1  # the convolution family: dmlspec adds nothing over plain XLA
PEER_LIBRARIES = ("numpy", "onnxruntime", "torch")
LARGE_BYTES = 1 << 20
NO_SINGLE_CAUSE = "no single cause above 30% of the call"
# Issue 15: at least 100 conformance cases/s on this 2-core machine, with `--workers 2`.
SUITE_WORKERS = "2"
SUITE_CASES_PER_SECOND = 100


@dataclass(frozen=True)
class Target:
    case: str
    ours: str  # the dmlspec variant's name
    # a peer variant's name, BEST_PEER, BEST_NEW_PEER, "copy" (bandwidth), or TRIVIAL or
    # TRIVIAL_NUMPY_IN (a trivial jitted call's cost)
    against: str
    limit: float  # time ratio at most (peer, trivial) or bandwidth fraction at least (copy)

    @property
    def text(self) -> str:
        if self.against == "copy":
            return f"{self.case}: {self.ours} >= {self.limit:.0%} of copy bandwidth"
        return f"{self.case}: {self.ours} <= {self.limit:g}x {self.against}"


def _family_targets() -> Iterator[Target]:
    for operator in FAMILY_OPERATORS:
        large, small = f"{operator.name}_large", f"{operator.name}_small"
        yield Target(large, "numpy in", BEST_NEW_PEER, 1.0)
        yield Target(large, "jax out=", BEST_PEER, 1.0)
        yield Target(large, "jax out=", "copy", 0.5)
        yield Target(small, "numpy in", TRIVIAL_NUMPY_IN, 2.0)
        yield Target(small, "jax", TRIVIAL, 2.0)


def _compute_targets() -> Iterator[Target]:
    for case in FAMILY_CASES:
        yield Target(case.name, "numpy in", PLAIN_XLA_NUMPY_IN, PLAIN_XLA_LIMIT)
        if case.takes_out:
            yield Target(case.name, "jax out=", PLAIN_XLA_OUT, PLAIN_XLA_LIMIT)
        else:  # several outputs, no out=: device arrays in, a fresh output, against the same
            yield Target(case.name, "jax", PLAIN_XLA_NEW, PLAIN_XLA_LIMIT)
        if case.memory_bound:
            yield Target(case.name, "jax out=", "copy", 0.5)


USER_PATHS = ("ops.run, numpy in", "numpy in")  # NumPy arrays in, a fresh output

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
        Target(f"{name}_small", "jax", TRIVIAL, 2.0)
        for name in ("scatter_nd", "gather_nd", "scatter_elements", "fill_value_sequence")
    ),
    *_family_targets(),
    *_compute_targets(),
)


def _peer(case: list[Timing], against: str) -> Timing | None:
    """The timing a target compares with: a named variant (a trivial jitted call is one), or
    the fastest correct peer (of any mode, or making a new output)."""
    if against in (BEST_PEER, BEST_NEW_PEER):
        peers = [
            t
            for t in case
            if t.variant.library in PEER_LIBRARIES
            and t.correct is not False
            and (against == BEST_PEER or t.variant.mode == NEW)
        ]
        return min(peers, key=lambda t: t.median, default=None)
    if against == PLAIN_XLA_NUMPY_IN:
        return _first(case, lambda v: is_plain_xla_on_numpy(v.library, v.name))
    if against == PLAIN_XLA_OUT:
        return _first(case, lambda v: v.library == PLAIN_XLA and v.mode == IN_PLACE)
    if against == PLAIN_XLA_NEW:
        return _first(
            case,
            lambda v: (
                v.library == PLAIN_XLA
                and v.mode == NEW
                and not is_plain_xla_on_numpy(v.library, v.name)
            ),
        )
    # A peer's new-output form where it also has an in-place one of the same name; of the
    # same peer in other configurations ("onnxruntime GatherND, spinning, alone"), the fastest.
    named = [
        t for t in case if t.variant.name == against or t.variant.name.startswith(f"{against}, ")
    ]
    named.sort(key=lambda t: (t.variant.mode != NEW, t.correct is False, t.median))
    return named[0] if named else None


def _first(case: list[Timing], wanted: Callable[[Variant], bool]) -> Timing | None:
    return next((t for t in case if wanted(t.variant)), None)


def check_targets(
    timings: dict[str, list[Timing]],
    copy_gbps: float,
    fault_seconds: float,
    families: dict[str, str] | None = None,
    device: DeviceRates | None = None,
    peak_gflops: float | None = None,
) -> list[dict[str, Any]]:
    """Each target: met or missed, by how much, and the evidence that explains a miss.
    `families` (case -> family) labels each entry, for grouping the printout; `device` is the
    accelerator the kernels ran on (None: the CPU), whose transfers and call floor explain;
    `peak_gflops` the matrix-multiply peak that compute-bound variants' GFLOP/s are read
    against (peak.py)."""
    results = []
    for target in TARGETS:
        if target.case not in timings:
            continue
        case = timings[target.case]
        ours = next(
            (t for t in case if (t.variant.name, t.variant.library) == (target.ours, "dmlspec")),
            None,
        )
        if ours is None:
            continue
        entry: dict[str, Any] = {
            "target": target.text,
            "case": target.case,
            "family": (families or {}).get(target.case, "seed"),
        }
        if ours.correct is False:
            entry.update(met=False, measured=f"{target.ours} computed a wrong output")
            entry["evidence"] = ["its first call's output differs from the expected one"]
            results.append(entry)
            continue
        if target.against == "copy":
            fraction = ours.gigabytes_per_second / copy_gbps
            first, third = ours.quartiles  # more seconds, less bandwidth: third is the low end
            low, high = fraction * ours.median / third, fraction * ours.median / first
            entry.update(value=fraction, met=fraction >= target.limit)
            entry["measured"] = f"{fraction:.0%} of copy bandwidth"
            entry["measured"] += _spread(entry, low, high, target.limit, f"{low:.0%}-{high:.0%}")
        else:
            other = _peer(case, target.against)
            if other is None:
                entry.update(met=None, measured=f"{target.against} not measured (not installed)")
                results.append(entry)
                continue
            ratio = ours.median / other.median
            entry.update(value=ratio, met=ratio <= target.limit)
            named = "" if other.variant.name == target.against else f"{other.variant.name} "
            entry["measured"] = f"{ratio:.2f}x ({_ms(ours.median)} vs {named}{_ms(other.median)})"
            (ours_first, ours_third), (other_first, other_third) = ours.quartiles, other.quartiles
            low, high = ours_first / other_third, ours_third / other_first
            entry["measured"] += _spread(entry, low, high, target.limit, f"{low:.2f}-{high:.2f}x")
            on_device = _peer(case, TRIVIAL)
            if target.against == TRIVIAL_NUMPY_IN and on_device is not None:
                entry["measured"] += (
                    f"; {ours.median / on_device.median:.2f}x the trivial call on a device array"
                )
        if not entry["met"]:
            entry["evidence"] = _evidence(ours, case, copy_gbps, fault_seconds, device, peak_gflops)
        results.append(entry)
    return results


def _spread(entry: dict[str, Any], low: float, high: float, limit: float, shown: str) -> str:
    """Record the range a target's measure spans between the rounds' quartiles (ours' first
    against the peer's third, and the other way round) and whether the limit lies inside it:
    a verdict that this run's noise could turn. Returns the words that say so."""
    entry.update(spread=[low, high], within_noise=low <= limit <= high)
    inside = ", the limit within it" if entry["within_noise"] else ""
    return f"; between the rounds' quartiles {shown}{inside}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _placement(arrays: tuple[np.ndarray, ...]) -> list[str]:
    """Where the large NumPy inputs sit, as kernels.host decides: XLA reads an aligned one in
    place; a misaligned one is passed as a window, which a program XLA cannot fuse its slice
    into copies first (measured: YNNPACK's float reductions, concatenation); one no window
    applies to (not C-contiguous, misaligned by part of an element) XLA copies."""
    notes = []
    boundary = f"{host.ALIGNMENT}-byte"
    for position, array in enumerate(arrays):
        if array.nbytes < host.WINDOW_MIN_BYTES:
            continue
        offset = array.ctypes.data % host.ALIGNMENT
        if offset == 0:
            where = f"{boundary} aligned: read in place"
        elif host.window(array) is not None:
            where = (
                f"{offset} bytes past a {boundary} boundary: passed as a window (read in place "
                "where XLA fuses the window's slice into its loops, copied where it cannot: "
                "measured for float reductions and concatenation)"
            )
        else:
            where = f"{offset} bytes past a {boundary} boundary and no window applies: copied"
        notes.append(f"NumPy input {position} ({array.nbytes / MiB:.0f} MiB): {where}")
    return notes


def _size(size: int) -> str:
    return f"{size / MiB:.0f} MiB" if size >= MiB else f"{size / 1024:.1f} KiB"


def _transfers(variant: Variant, device: DeviceRates) -> tuple[float, str] | None:
    """The host-device copies a call on NumPy arrays takes on an accelerator, in seconds at
    the rates measured in the run, and in words; None for a call on device arrays."""
    sent = sum(a.nbytes for a in variant.numpy_inputs)
    fetched = variant.host_output_bytes
    if not sent and not fetched:
        return None
    seconds = sent / device.host_to_device_gbps / 1e9 + fetched / device.device_to_host_gbps / 1e9
    parts = [f"{_size(sent)} of NumPy inputs to the {device.platform}"]
    if fetched:
        parts.append(f"{_size(fetched)} of output back to the host")
    return seconds, (
        f"{variant.name}: host-device transfers, " + " and ".join(parts) + f": about "
        f"{_ms(seconds)} at this run's rates ({device.host_to_device_gbps:.1f} GB/s to the "
        f"device, {device.device_to_host_gbps:.1f} GB/s back)"
    )


def _evidence(
    ours: Timing,
    case: list[Timing],
    copy_gbps: float,
    fault_seconds: float,
    device: DeviceRates | None = None,
    peak_gflops: float | None = None,
) -> list[str]:
    notes = []
    faults = ours.faults_per_call
    if faults >= 1:
        spent = faults * fault_seconds
        share = (
            f"{spent / ours.median:.0%} of the call"
            if spent < ours.median
            else "more than the call: threads took them at once"
        )
        notes.append(
            f"{ours.variant.name}: {faults:.0f} minor page faults per call, about {_ms(spent)} "
            f"at {fault_seconds * 1e6:.2f} us per fault measured in this run ({share})"
        )
    notes.append(f"{ours.variant.name}: {_ms(ours.median)}, {_rate(ours, copy_gbps, peak_gflops)}")
    on_device = next(
        (t for t in case if (t.variant.name, t.variant.library) == ("jax", "dmlspec")), None
    )
    imported = 0.0
    if ours.variant.name == "numpy in" and on_device is not None:
        imported = max(ours.median - on_device.median, 0.0)
        notes.append(
            f"the same call on device arrays (jax): {_ms(on_device.median)}, "
            f"{on_device.faults_per_call:.0f} faults per call; importing the NumPy inputs "
            f"costs the difference, {_ms(imported)}"
        )
        if device is None:  # on an accelerator every input is copied: _transfers says so
            notes.extend(_placement(ours.variant.numpy_inputs))
    transfers = None if device is None else _transfers(ours.variant, device)
    if transfers is not None:
        notes.append(transfers[1])
    peers = [t for t in case if t.variant.library in PEER_LIBRARIES and t.correct is not False]
    fastest = min(peers, key=lambda t: t.median, default=None)
    if fastest is not None:
        notes.append(
            f"fastest peer: {fastest.variant.label} ({fastest.variant.mode}) "
            f"{_ms(fastest.median)}{_share(fastest, copy_gbps, peak_gflops)}, "
            f"{fastest.faults_per_call:.0f} faults per call"
        )
    fresh = [t for t in peers if t.variant.mode == NEW]
    if ours.variant.mode == NEW and faults >= 1 and fresh:
        notes.append(
            "peers' fresh outputs: "
            + ", ".join(f"{t.variant.label} {t.faults_per_call:.0f}" for t in fresh)
            + " faults per call"
        )
    # The call against the kernel's program jitted whole, that against plain XLA, both in
    # the mode of ours (the NumPy-input path makes a new output).
    call = on_device if ours.variant.name == "numpy in" else ours
    mode = ours.variant.mode
    program = _library(case, KERNEL_JIT, mode)
    plain = _library(case, PLAIN_XLA, mode)
    for label, timing, compiled in (
        ("the kernel's program jitted whole", program, _library(case, KERNEL_JIT, NEW)),
        ("plain XLA", plain, _library(case, PLAIN_XLA, NEW)),
    ):
        if timing is not None:
            into = f", compiled into {compiled.compiled}" if compiled and compiled.compiled else ""
            notes.append(f"{label}, {timing.variant.name}: {_ms(timing.median)}{into}")
    trivial = _peer(case, TRIVIAL)
    reading = _reading(
        ours, call, program, plain, fastest, trivial, imported, faults * fault_seconds, device
    )
    if device is not None:
        transferring = 0.0 if transfers is None or imported else transfers[0]
        reading = _with(reading, _device_causes(ours, device, transferring))
    notes.append(reading)
    return notes


def _share(timing: Timing, copy_gbps: float, peak_gflops: float | None) -> str:
    """The fastest peer's rate as the evidence has always said it for bytes (" = 40% of copy
    bandwidth"), and with its GFLOP/s where it counts FLOPs."""
    if timing.variant.flops and peak_gflops:
        return f", {_rate(timing, copy_gbps, peak_gflops)}"
    return f" = {timing.gigabytes_per_second / copy_gbps:.0%} of copy bandwidth"


def _rate(timing: Timing, copy_gbps: float, peak_gflops: float | None) -> str:
    """A variant's rate in words: GFLOP/s and its share of the matrix-multiply peak where it
    counts FLOPs (and a peak was measured), else GB/s and its share of the copy bandwidth."""
    if timing.variant.flops and peak_gflops:
        rate = timing.gigaflops_per_second
        return f"{rate:.1f} GFLOP/s = {rate / peak_gflops:.0%} of the matrix-multiply peak"
    rate = timing.gigabytes_per_second
    return f"{rate:.1f} GB/s = {rate / copy_gbps:.0%} of copy bandwidth"


def _device_causes(ours: Timing, device: DeviceRates, transferring: float) -> list[str]:
    """On an accelerator, the causes over 30% of the call that the CPU does not have: the wait
    every call timed here pays (the user's path waits for its result), and host-device
    transfers (`transferring` seconds; 0 where the NumPy import's share already says it)."""
    causes = []
    if transferring > 0.3 * ours.median:
        causes.append(f"host-device transfers (about {transferring / ours.median:.0%} of the call)")
    floor = device.call_floor_seconds
    if floor > 0.3 * ours.median:
        causes.append(
            f"the wait for the {device.platform}: a trivial jitted call and its wait take "
            f"{_ms(floor)} ({floor / ours.median:.0%} of the call)"
        )
    return causes


def _with(reading: str, causes: list[str]) -> str:
    """A reading with more causes; they replace the reading's 'no single cause'."""
    if not causes:
        return reading
    label, _, found = reading.partition(": ")
    kept = [] if found.startswith(NO_SINGLE_CAUSE) else [found]
    return f"{label}: " + "; ".join(kept + causes)


def _library(case: list[Timing], library: str, mode: str) -> Timing | None:
    return next((t for t in case if (t.variant.library, t.variant.mode) == (library, mode)), None)


def _compared(first: Timing | None, second: Timing | None) -> tuple[float, float] | None:
    """first's median over second's, and their difference; None unless both were measured
    and not both page-fault (the cost of faulting in fresh memory varies from call to call
    on a shared machine by more than the difference looked for)."""
    if first is None or second is None:
        return None
    if min(first.faults_per_call, second.faults_per_call) >= 1:
        return None
    return first.median / second.median, first.median - second.median


def _reading(
    ours: Timing,
    call: Timing | None,
    program: Timing | None,
    plain: Timing | None,
    fastest: Timing | None,
    trivial: Timing | None,
    imported: float,
    faulting: float,
    device: DeviceRates | None = None,
) -> str:
    """Where the time goes, read off the numbers above: every cause over 30% of the call (the
    import's copies fault too, so shares overlap). `call` is dmlspec's call on device arrays,
    `program` the kernel's program jitted whole and `plain` plain XLA, in the mode of ours;
    `trivial` the trivial jitted call (small cases)."""
    code = "CPU code" if device is None else f"{device.platform.upper()} code"
    shares = []
    if imported > 0.3 * ours.median:
        what = "importing the NumPy inputs"
        if device is not None:
            what = f"copying the NumPy inputs to the {device.platform}"
        shares.append(f"{what} ({imported / ours.median:.0%} of the call)")
    if faulting > 0.3 * ours.median:
        share = f"about {faulting / ours.median:.0%}" if faulting < ours.median else "most of it"
        shares.append(f"page faults on freshly allocated memory ({share})")
    overhead = _compared(call, program)
    if overhead is not None and overhead[0] > 1.3:
        shares.append(
            f"dmlspec's per-call work: the call is {overhead[0]:.1f}x its program jitted whole "
            f"({_ms(overhead[1])} more per call)"
        )
    formulation = _compared(program, plain)
    if formulation is not None and formulation[0] > 1.3:
        shares.append(
            f"the kernel's formulation: its program is {formulation[0]:.1f}x plain XLA's on the "
            "same arrays"
        )
    elif (
        plain is not None
        and fastest is not None
        and plain.median > 1.3 * fastest.median
        and ours.variant.bytes_moved >= LARGE_BYTES  # a small call's floor is the dispatch
    ):
        shares.append(
            f"XLA's {code} for the operation: plain XLA ({plain.variant.mode}) is "
            f"{plain.median / fastest.median:.1f}x the fastest peer too"
        )
    floor = _compared(program, trivial)
    if floor is not None and floor[0] > 2:
        plain_too = _compared(plain, trivial)
        shares.append(
            f"the compiled program alone is {floor[0]:.1f}x the trivial jitted call"
            + (
                f", and plain XLA's {plain_too[0]:.1f}x: XLA's {code} for the operation"
                if plain_too is not None and plain_too[0] > 2
                else ""
            )
        )
    if not shares:
        shares.append(f"{NO_SINGLE_CAUSE} (per-call overhead, or noise)")
    return f"reading ({ours.variant.name}): " + "; ".join(shares)
