"""Interleaved timing: every variant of a case runs once per round, so machine noise (the
other tenant, a frequency change) lands on all of them alike; medians over the rounds.

Each variant also reports its minor page faults per call (getrusage), the evidence for the
cost of fresh allocations, and its first call's time (for a JAX kernel: validation, tracing
and compilation)."""

from __future__ import annotations

import mmap
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compare import ulp_mismatches
from .peak import gigaflops

__all__ = [
    "Timing",
    "Tolerance",
    "Variant",
    "copy_bandwidth",
    "fault_cost",
    "matches",
    "minor_faults",
    "time_variants",
]

MiB = 1 << 20


@dataclass
class Variant:
    """One implementation of a case: `run` does one call and waits for its result."""

    name: str
    library: str  # "dmlspec" or the peer's library
    mode: str  # "new output" or "in place" (writes into a buffer it was given)
    run: Callable[[], object]
    bytes_moved: int  # bytes a perfect implementation must read plus write, per call
    # What `run` returned -> the output as numpy, to check it; None: nothing to check.
    fetch: Callable[[Any], Any] | None = np.asarray
    # The compiled HLO text of what `run` calls (dmlspec's kernels): evidence for a miss.
    compiled: Callable[[], str] | None = None
    # Timed in rounds of its own after the interleaved ones: a peer whose idle threads spin
    # after a call (onnxruntime's default session, torch's OpenMP threads) would otherwise slow
    # whichever variant runs next.
    alone: bool = False
    # The NumPy arrays a "numpy in" variant passes: where they sit in memory is evidence.
    numpy_inputs: tuple[np.ndarray, ...] = ()
    # Bytes of output the call returns as NumPy arrays (ops.run): on an accelerator, fetched.
    host_output_bytes: int = 0
    # Floating-point operations per call (a multiply-add counts two; peak.py): set for the
    # compute-bound cases, read as GFLOP/s against the matrix-multiply peak; 0: none counted.
    flops: int = 0

    @property
    def label(self) -> str:
        """The name with its library, once ("onnxruntime Exp", "numpy np.exp")."""
        if self.name.startswith(self.library):
            return self.name
        return f"{self.library} {self.name}"


@dataclass(frozen=True)
class Tolerance:
    """How far a correct float output may be from the expected one: `max_ulps` ULPs of each
    expected element, or `absolute` (a number, or one per element: an accumulated-rounding
    bound). `rule` says whose rule it is, for the printout."""

    max_ulps: int
    rule: str
    absolute: float | np.ndarray | None = None


@dataclass
class Timing:
    variant: Variant
    seconds: list[float] = field(default_factory=list)  # per call, one entry per round
    first_call: float = 0.0
    faults: int = 0
    calls: int = 0
    correct: bool | None = None  # the first call's output equals the expected one
    compiled: str | None = None  # what XLA compiled the call into (hlo.HloSummary.text)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def quartiles(self) -> tuple[float, float]:
        """The first and third quartiles of the per-round seconds (the median twice for one
        round): the spread of this variant's rounds, against which a ratio's noise is read."""
        if len(self.seconds) < 2:
            return self.median, self.median
        first, _, third = statistics.quantiles(self.seconds, n=4, method="inclusive")
        return first, third

    @property
    def faults_per_call(self) -> float:
        return self.faults / self.calls if self.calls else 0.0

    @property
    def gigabytes_per_second(self) -> float:
        return self.variant.bytes_moved / self.median / 1e9

    @property
    def gigaflops_per_second(self) -> float:
        return gigaflops(self.variant.flops, self.median)


def matches(output: Any, expected: np.ndarray, tolerance: Tolerance | None = None) -> bool:
    """Same dtype and shape, and bitwise equal (no `tolerance`) or within it."""
    actual = np.ascontiguousarray(np.asarray(output))
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return False
    wanted = np.ascontiguousarray(expected)
    if tolerance is None:
        return bool(np.array_equal(actual.view(np.uint8), wanted.view(np.uint8)))
    far = ulp_mismatches(
        wanted, actual, wanted, tolerance.max_ulps, abs_tolerance=tolerance.absolute, limit=1
    )
    return not far


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def time_variants(
    variants: list[Variant],
    rounds: int,
    warmup: int,
    calls_per_round: int = 1,
    expected: np.ndarray | None = None,
    tolerance: Tolerance | None = None,
) -> list[Timing]:
    """Median-ready timings: first calls (checked against `expected`: bitwise, or within
    `tolerance`), `warmup` untimed rounds, then `rounds` timed ones, each round running every
    variant `calls_per_round` times in a row; `alone` variants get warm-up and rounds of their
    own afterwards."""
    timings = [Timing(v) for v in variants]
    for timing in timings:
        start = time.perf_counter()
        returned = timing.variant.run()
        timing.first_call = time.perf_counter() - start
        if expected is not None and timing.variant.fetch is not None:
            timing.correct = matches(timing.variant.fetch(returned), expected, tolerance)
    together = [t for t in timings if not t.variant.alone]
    blocks = [together] + [[t] for t in timings if t.variant.alone]
    for block in blocks:
        for _ in range(warmup):
            for timing in block:
                timing.variant.run()
        for _ in range(rounds):
            for timing in block:
                _time_round(timing, calls_per_round)
    return timings


def _time_round(timing: Timing, calls: int) -> None:
    run = timing.variant.run
    faults = minor_faults()
    start = time.perf_counter()
    for _ in range(calls):
        run()
    elapsed = time.perf_counter() - start
    timing.faults += minor_faults() - faults
    timing.calls += calls
    timing.seconds.append(elapsed / calls)


def copy_bandwidth(size: int, rounds: int) -> tuple[float, list[float]]:
    """The machine's memory-copy bandwidth: np.copyto between two already-touched buffers of
    `size` bytes, counted as bytes read plus bytes written (STREAM's convention). Returns
    (GB/s at the median, the per-round seconds)."""
    source = np.ones(size // 4, np.float32)
    target = np.zeros_like(source)
    np.copyto(target, source)
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        np.copyto(target, source)
        seconds.append(time.perf_counter() - start)
    return 2 * size / statistics.median(seconds) / 1e9, seconds


def fault_cost(size: int = 64 * MiB, rounds: int = 5) -> float:
    """Seconds per minor page fault on fresh anonymous memory (as malloc hands out large
    blocks: mmap, no huge pages): writing a fresh mapping minus rewriting it, divided by the
    faults the fresh write took."""
    fresh, again, faults = [], [], []
    for _ in range(rounds):
        mapping = mmap.mmap(-1, size)
        buffer = np.frombuffer(mapping, np.uint8)
        before = minor_faults()
        start = time.perf_counter()
        buffer.fill(1)
        fresh.append(time.perf_counter() - start)
        faults.append(minor_faults() - before)
        start = time.perf_counter()
        buffer.fill(2)
        again.append(time.perf_counter() - start)
        del buffer
        mapping.close()
    per_call = statistics.median(fresh) - statistics.median(again)
    return max(per_call, 0.0) / max(statistics.median(faults), 1)
