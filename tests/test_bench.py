"""The benchmark (scripts/bench.py) runs end to end at a tiny scale, checks every variant's
output, and reports what the issue asks for. Its numbers are not tested: timings belong to
the benchmark, never to unit tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

from dmlspec.bench import families
from dmlspec.bench import main as bench_main
from dmlspec.bench.accelerator import DeviceRates, measure_device
from dmlspec.bench.cases import FAMILY_CASES, FAMILY_OPERATORS, SIZES, build_cases, case_families
from dmlspec.bench.families import (
    KERNEL_JIT,
    ON_NUMPY_ARRAYS,
    PLAIN_XLA,
    compiled_text,
    dot_product_expected,
    operator_json,
    spec_tolerance,
)
from dmlspec.bench.hlo import summarize
from dmlspec.bench.markdown import noise_note
from dmlspec.bench.peak import (
    MatmulPeak,
    convolution_flops,
    gemm_flops,
    gigaflops,
    higher_peak,
    measure_matmul_peak,
)
from dmlspec.bench.peers import torch_peer
from dmlspec.bench.targets import (
    BEST_NEW_PEER,
    BEST_PEER,
    PLAIN_XLA_NEW,
    PLAIN_XLA_NUMPY_IN,
    PLAIN_XLA_OUT,
    TARGETS,
    check_targets,
)
from dmlspec.bench.timing import Timing, Variant, matches, time_variants
from dmlspec.bench.variants import TRIVIAL, TRIVIAL_NUMPY_IN
from tests.kernel_cases import misaligned

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a whole benchmark run; the options and the report are tested below
def test_benchmark_runs_and_writes_its_json(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--scale", "0.002"]
    command += ["--runs", "2", "--warmup", "0", "--suite", "none", "--json", str(output)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "copy bandwidth" in finished.stdout and "targets" in finished.stdout
    results = json.loads(output.read_text())
    assert results["copy_bandwidth_gbps"] > 0
    names = {case["name"] for case in results["cases"]}
    assert names == set(build_cases())
    takes_out = {c.name: c.takes_out for c in FAMILY_CASES}
    for case in results["cases"]:
        assert case["size"] == ("small" if "_small" in case["name"] else "large")
        libraries = {v["library"] for v in case["variants"]}
        # NumPy has no convolution, pooling, resize, normalization or LSTM, and no BLAS for
        # FLOAT16 (convolution.py)
        no_numpy = case["family"] in FAMILIES_WITHOUT_NUMPY
        assert "dmlspec" in libraries and ("numpy" in libraries or no_numpy)
        if case["family"] != "seed":
            assert "onnxruntime" in libraries, case["name"]
            dmlspec = {v["name"] for v in case["variants"] if v["library"] == "dmlspec"}
            into = {"jax out="} if takes_out.get(case["name"], True) else set()
            assert {"numpy in", "jax"} | into <= dmlspec, case["name"]
        for variant in case["variants"]:
            assert variant["rounds"] == 2 and variant["median_seconds"] > 0
            if variant["library"] != "jax":  # the trivial call has no output to check
                assert variant["correct"] is True, (case["name"], variant["name"])
    assert len(results["targets"]) == len(TARGETS)
    for entry in results["targets"]:
        assert entry["met"] in (True, False, None)
        assert entry["met"] is not False or entry["evidence"]
    # The printout groups cases and targets by family.
    assert results["matmul_peak"]["gflops"] > 0  # the convolution family ran: peak measured
    families = ("seed", "element_wise", "reduction", "data_movement", "convolution", "pooling")
    for family in (*families, "resampling", "normalization", "recurrent"):
        assert f"== {family} ==" in finished.stdout and f"  {family}: " in finished.stdout


# The families whose benchmark cases have no NumPy variant: FAMILY_CASES' families.
FAMILIES_WITHOUT_NUMPY = ("convolution", "pooling", "resampling", "normalization", "recurrent")


def test_every_case_has_a_64_bit_a_float16_a_large_and_a_small_form() -> None:
    names = set(build_cases())
    for operator in ("scatter_nd", "gather_nd", "scatter_elements", "fill_value_sequence"):
        assert f"{operator}_large" in names and f"{operator}_small" in names
    assert any(n.endswith("_int64") for n in names) and any(n.endswith("_float16") for n in names)


def test_every_family_operator_has_a_large_and_a_small_case_and_targets() -> None:
    names, grouped = set(build_cases()), case_families()
    wanted = {"ELEMENT_WISE_EXP", "ELEMENT_WISE_ADD", "ELEMENT_WISE_LOGICAL_GREATER_THAN", "CAST"}
    wanted |= {"ACTIVATION_SOFTMAX", "REDUCE", "ARGMAX", "SLICE", "PADDING", "JOIN", "GATHER"}
    built = set()
    for operator in FAMILY_OPERATORS:
        for size in SIZES:
            name = f"{operator.name}_{size}"
            assert name in names and grouped[name] == operator.family
        case = build_cases(0.002)[f"{operator.name}_small"]()
        built.add(case.operator)
        assert case.size == "small" and case.expected.nbytes <= 2048, operator.name
        targeted = {(t.ours, t.against) for t in TARGETS if t.case == f"{operator.name}_large"}
        assert {("numpy in", BEST_NEW_PEER), ("jax out=", BEST_PEER), ("jax out=", "copy")} == (
            targeted
        )
    assert built == wanted


def _tiny(name: str) -> object:
    return build_cases(0.002)[name]()


@pytest.mark.parametrize("name", ["exp_small", "add_small", "reduce_sum_outer_small"])
def test_a_family_case_catches_a_wrong_output(name: str) -> None:
    case = _tiny(name)
    expected = case.expected  # type: ignore[attr-defined]
    tolerance = case.tolerance  # type: ignore[attr-defined]
    wrong = expected.copy()
    wrong.reshape(-1)[3] += np.float32(0.25) * (1 + abs(wrong.reshape(-1)[3]))
    variants = list(case.variants)  # type: ignore[attr-defined]
    ours = next(v for v in variants if v.name == "jax")
    broken = Variant("broken", "dmlspec", ours.mode, lambda: wrong, ours.bytes_moved)
    timings = time_variants([*variants, broken], 1, 0, 1, expected, tolerance)
    verdicts = {(t.variant.library, t.variant.name): t.correct for t in timings}
    assert verdicts.pop(("dmlspec", "broken")) is False
    assert all(verdicts.values()), verdicts


def test_the_spec_tolerance_admits_its_bound_and_no_more() -> None:
    """exp's rule (the spec's ULP bound): an output moved by that many ULPs passes, one moved
    by twice as many fails; CAST's rule is exact, so it is compared bitwise."""
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    expected = np.exp(x.astype(np.float64)).astype(np.float32)
    operator = operator_json("ELEMENT_WISE_EXP", {"InputTensor": x, "OutputTensor": expected})
    tolerance = spec_tolerance(operator, {"InputTensor": x}, expected)
    assert tolerance is not None and tolerance.max_ulps >= 1

    def moved(ulps: int) -> np.ndarray:
        out = expected.copy()
        for _ in range(ulps):
            out = np.nextafter(out, np.float32(np.inf))
        return out

    assert matches(moved(tolerance.max_ulps), expected, tolerance)
    assert not matches(moved(2 * tolerance.max_ulps + 1), expected, tolerance)
    assert not matches(expected.astype(np.float64), expected, tolerance)  # dtype counts
    half = expected.astype(np.float16)
    cast = operator_json("CAST", {"InputTensor": expected, "OutputTensor": half})
    assert spec_tolerance(cast, {"InputTensor": expected}, half) is None


def test_the_sum_tolerance_allows_any_summation_order() -> None:
    """REDUCE SUM's accumulated-rounding bound: float32 sums in two orders both pass; a sum
    that drops one term fails."""
    x = np.random.default_rng(0).standard_normal((4, 4096)).astype(np.float32)
    expected = x.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
    operator = operator_json(
        "REDUCE",
        {"InputTensor": x, "OutputTensor": expected},
        Function="DML_REDUCE_FUNCTION_SUM",
        AxisCount=1,
        Axes=[1],
    )
    tolerance = spec_tolerance(operator, {"InputTensor": x}, expected)
    assert tolerance is not None
    sequential = np.cumsum(x, axis=1, dtype=np.float32)[:, -1:]
    backwards = np.cumsum(x[:, ::-1], axis=1, dtype=np.float32)[:, -1:]
    assert matches(sequential, expected, tolerance) and matches(backwards, expected, tolerance)
    dropped = x[:, 1:].astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
    assert not matches(dropped, expected, tolerance)


def test_torch_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(families, "optional", lambda name: None)
    case = _tiny("join_small")
    libraries = {v.library for v in case.variants}  # type: ignore[attr-defined]
    assert libraries == {"dmlspec", KERNEL_JIT, PLAIN_XLA, "numpy", "onnxruntime"}


ENTRY_HLO = """
%fused_computation (param_0: f32[64,256]) -> f32[64,256] {
  ROOT %add.1 = f32[64,256]{1,0} add(%param_0, %param_0)
}

ENTRY %main.5 (a.1: f32[64,256]) -> s64[64,1] {
  %a.1 = f32[64,256]{1,0} parameter(0), metadata={op_name="a"}
  %constant.0 = f32[] constant(0)
  %iota_reduce_fusion = (s32[64]{0}, s64[64]{0}) fusion(%a.1), kind=kLoop, calls=%fused
  %reduce.3 = s64[64]{0} get-tuple-element(%iota_reduce_fusion), index=1
  %wrapped_copy.2 = s64[64]{0} copy(%reduce.3)
  ROOT %bitcast = s64[64,1]{1,0} bitcast(%wrapped_copy.2)
}
"""


def test_hlo_summary_counts_the_entry_passes_and_what_they_write() -> None:
    summary = summarize(ENTRY_HLO)  # parameters, constants, views and tuple parts move nothing
    assert summary.kernels == (
        ("iota_reduce_fusion", "(s32[64], s64[64])"),
        ("wrapped_copy", "s64[64]"),
    )
    assert summary.bytes_written == 64 * 4 + 64 * 8 + 64 * 8
    assert summary.computed == ("f32", "s32", "s64")  # the fused add's f32 counts too
    assert summary.text(512).startswith("2 passes over memory (iota_reduce_fusion -> ")
    x = np.zeros((64, 256), np.float32)
    compiled = summarize(compiled_text(lambda a: a * 2 + 1, [x]))  # XLA fuses it: one pass
    assert len(compiled.kernels) == 1 and compiled.bytes_written == x.nbytes


def _timing(
    name: str, library: str, mode: str, seconds: float | list[float], correct: bool = True
) -> Timing:
    """A timed variant: one round of `seconds`, or one round per entry of a list."""
    rounds = seconds if isinstance(seconds, list) else [seconds]
    variant = Variant(name, library, mode, lambda: None, 1 << 26)
    return Timing(variant, rounds, correct=correct, calls=len(rounds))


def test_best_peer_targets_skip_wrong_peers_and_explain_misses() -> None:
    target = next(t for t in TARGETS if t.case == "add_large" and t.against == BEST_NEW_PEER)
    timings = {
        "add_large": [
            _timing("numpy in", "dmlspec", "new output", 0.030),
            _timing("jax", "dmlspec", "new output", 0.020),
            _timing("jax out=", "dmlspec", "in place", 0.010),
            _timing("wrong but fast", "numpy", "new output", 0.001, correct=False),
            _timing("np.add", "numpy", "new output", 0.015),
            _timing("np.add out=", "numpy", "in place", 0.012),
        ]
    }
    results = {r["target"]: r for r in check_targets(timings, 20.0, 1e-6)}
    plain = results[target.text]
    assert plain["met"] is False and "vs np.add 15.000 ms" in plain["measured"]
    assert any(note.startswith("reading (numpy in)") for note in plain["evidence"])
    best = next(r for r in results.values() if BEST_PEER + ":" in r["target"] + ":")
    assert best["met"] is True and "np.add out= 12.000 ms" in best["measured"]


def test_a_numpy_input_miss_says_where_each_large_input_sits() -> None:
    aligned = misaligned((2048, 256), "float32", 0)
    shifted = misaligned((2048, 256), "float32", 16)
    small = np.zeros(4, np.float32)
    numpy_in = Variant(
        "numpy in",
        "dmlspec",
        "new output",
        lambda: None,
        1 << 26,
        numpy_inputs=(shifted, small, aligned),
    )
    case = [
        Timing(numpy_in, [0.030], correct=True, calls=1),
        _timing("jax", "dmlspec", "new output", 0.010),
        _timing("np.add", "numpy", "new output", 0.015),
    ]
    results = check_targets({"add_large": case}, 20.0, 1e-6)
    missed = next(r for r in results if r["met"] is False and "numpy in" in r["target"])
    placed = [n for n in missed["evidence"] if n.startswith("NumPy input")]
    assert placed == [
        "NumPy input 0 (2 MiB): 16 bytes past a 64-byte boundary: passed as a window (read in "
        "place where XLA fuses the window's slice into its loops, copied where it cannot: "
        "measured for float reductions and concatenation)",
        "NumPy input 2 (2 MiB): 64-byte aligned: read in place",
    ]


def test_a_miss_is_read_as_the_share_of_each_cause() -> None:
    """The call against the kernel's program jitted whole (dmlspec's per-call work), that
    against plain XLA (the formulation), plain XLA against the peers (XLA's code)."""

    def reading(call: float, program: float, plain: float, faults: int = 0) -> str:
        case = [
            _timing("jax out=", "dmlspec", "in place", call),
            _timing("jax.jit(ops.f) out=", KERNEL_JIT, "in place", program),
            _timing("jax.jit(f) out=", PLAIN_XLA, "in place", plain),
            _timing("np.f out=", "numpy", "in place", 0.010),
        ]
        for timing in case[:3]:
            timing.faults = faults
        results = check_targets({"add_large": case}, 20.0, 1e-6)
        missed = next(r for r in results if r["met"] is False)
        return str(missed["evidence"][-1])

    overhead_and_formulation = reading(0.060, 0.040, 0.020)
    assert "per-call work: the call is 1.5x" in overhead_and_formulation
    assert "formulation: its program is 2.0x" in overhead_and_formulation
    assert "XLA's CPU code" in reading(0.020, 0.020, 0.020)
    # Calls that all fault in fresh memory are not compared: the faults' cost is too noisy.
    assert "per-call work" not in reading(0.060, 0.040, 0.020, faults=16385)
    assert "formulation" not in reading(0.060, 0.040, 0.020, faults=16385)
    assert reading(0.020, 0.020, 0.020).startswith("reading (jax out=): XLA's")


def test_a_small_miss_names_a_slow_compiled_program() -> None:
    case = [
        _timing("jax", "dmlspec", "new output", 33e-6),
        _timing("jax.jit(ops.f)", KERNEL_JIT, "new output", 28e-6),
        _timing("jax.jit(f)", PLAIN_XLA, "new output", 28e-6),
        _timing(TRIVIAL, "jax", "new output", 4e-6),
    ]
    results = check_targets({"softmax_small": case}, 20.0, 1e-6)
    missed = next(r for r in results if r["met"] is False)
    assert "the compiled program alone is 7.0x the trivial jitted call" in missed["evidence"][-1]
    assert "XLA's CPU code" in missed["evidence"][-1]


def test_small_calls_compare_with_the_trivial_call_on_the_same_kind_of_input() -> None:
    # NumPy in: the trivial call given a NumPy array (any jitted call imports it first); the
    # ratio to the trivial call on a device array is printed beside it. Device arrays: that one.
    case = [
        _timing("numpy in", "dmlspec", "new output", 9e-6),
        _timing("jax", "dmlspec", "new output", 9e-6),
        _timing(TRIVIAL, "jax", "new output", 4e-6),
        _timing(TRIVIAL_NUMPY_IN, "jax", "new output", 5e-6),
    ]
    results = {r["target"]: r for r in check_targets({"exp_small": case}, 20.0, 1e-6)}
    numpy_in = results[f"exp_small: numpy in <= 2x {TRIVIAL_NUMPY_IN}"]
    assert numpy_in["met"] is True and numpy_in["value"] == pytest.approx(1.8)
    assert "2.25x the trivial call on a device array" in numpy_in["measured"]
    on_device = results[f"exp_small: jax <= 2x {TRIVIAL}"]
    assert on_device["met"] is False and on_device["value"] == pytest.approx(2.25)


GPU = DeviceRates(
    platform="gpu",
    copy_gbps=2000.0,
    single_copy_gbps=1500.0,
    host_to_device_gbps=8.0,
    device_to_host_gbps=4.0,
    call_floor_seconds=80e-6,
)


def test_on_an_accelerator_a_numpy_input_miss_names_the_transfers() -> None:
    """On a GPU NumPy inputs are copied to the device and ops.run's outputs back: the evidence
    says how long that takes at the run's measured rates instead of where inputs sit in host
    memory, and a reading with no other cause names the transfers."""
    data = np.zeros((2048, 1024), np.float32)  # 8 MiB: 1.049 ms to the device at 8 GB/s
    ops_run = Variant(
        "ops.run, numpy in",
        "dmlspec",
        "new output",
        lambda: None,
        1 << 24,
        numpy_inputs=(data,),
        host_output_bytes=data.nbytes,  # 2.097 ms back at 4 GB/s
    )
    case = [
        Timing(ops_run, [0.004], correct=True, calls=1),
        _timing("onnxruntime GatherND", "onnxruntime", "new output", 0.002),
    ]
    results = check_targets({"gather_nd_large": case}, 2000.0, 1e-6, device=GPU)
    missed = next(r for r in results if r["met"] is False)
    evidence = missed["evidence"]
    assert not any(n.startswith("NumPy input") for n in evidence)  # host placement: CPU only
    assert (
        "ops.run, numpy in: host-device transfers, 8 MiB of NumPy inputs to the gpu and 8 MiB "
        "of output back to the host: about 3.146 ms at this run's rates (8.0 GB/s to the "
        "device, 4.0 GB/s back)"
    ) in evidence
    assert evidence[-1] == (
        "reading (ops.run, numpy in): host-device transfers (about 79% of the call)"
    )
    on_cpu = check_targets({"gather_nd_large": case}, 20.0, 1e-6)
    assert not any("host-device" in n for r in on_cpu for n in r.get("evidence", []))


def test_on_an_accelerator_a_bandwidth_miss_names_the_wait_for_the_device() -> None:
    case = [
        _timing("jax out=", "dmlspec", "in place", 200e-6),
        _timing("jax.jit(ops.f) out=", KERNEL_JIT, "in place", 190e-6),
        _timing("jax.jit(f) out=", PLAIN_XLA, "in place", 180e-6),
        _timing("np.f out=", "numpy", "in place", 0.010),
    ]
    results = check_targets({"add_large": case}, 2000.0, 1e-6, device=GPU)
    missed = next(r for r in results if r["met"] is False and "copy" in r["target"])
    assert missed["evidence"][-1] == (
        "reading (jax out=): the wait for the gpu: a trivial jitted call and its wait take "
        "80.0 us (40% of the call)"
    )


def test_device_rates_are_measured_on_the_default_device() -> None:
    """What the benchmark measures on an accelerator runs on any JAX device (CI: the CPU)."""
    rates = measure_device(1 << 20, runs=3)
    assert rates.platform == jax.devices()[0].platform
    assert min(rates.copy_gbps, rates.single_copy_gbps) > 0
    assert min(rates.host_to_device_gbps, rates.device_to_host_gbps) > 0
    assert 0 < rates.call_floor_seconds < 1


def test_a_variant_with_a_wrong_output_is_flagged() -> None:
    expected = np.arange(4, dtype=np.float32)
    right = Variant("right", "test", "new output", lambda: expected.copy(), 16)
    wrong = Variant("wrong", "test", "new output", lambda: expected[::-1].copy(), 16)
    widened = Variant("widened", "test", "new output", lambda: expected.astype(np.float64), 16)
    timings = time_variants([right, wrong, widened], rounds=2, warmup=0, expected=expected)
    assert [t.correct for t in timings] == [True, False, False]
    assert all(len(t.seconds) == 2 for t in timings)


def test_family_option_selects_cases_and_list_names_families(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DMLSPEC_JAX_CACHE", "off")  # what main sets, undone after the test
    assert bench_main(["--list"]) == 0
    assert re.search(r"^argmax_outer_small +reduction$", capsys.readouterr().out, re.M)
    output = tmp_path / "bench.json"
    command = ["--family", "reduction", "--cases", "add_small", "argmax_inner_small"]
    command += ["--runs", "1", "--warmup", "0", "--suite", "none", "--json", str(output)]
    assert bench_main(command) == 0
    assert [c["name"] for c in json.loads(output.read_text())["cases"]] == ["argmax_inner_small"]


@pytest.mark.parametrize("option", ["--cases", "--family"])
def test_unknown_case_or_family_is_refused(option: str) -> None:
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), option, "nope"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 2
    what = "cases" if option == "--cases" else "families"
    assert f"unknown {what} ['nope']" in finished.stderr
    assert "Traceback" not in finished.stderr


@pytest.mark.parametrize("runs", ["0", "-1"])
def test_bad_run_counts_are_refused(runs: str) -> None:
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--runs", runs]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 2 and "--runs must be at least 1" in finished.stderr


def test_packed_comparison_times_both_revisions(tmp_path: Path) -> None:
    output = tmp_path / "packed.json"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--packed-against", "HEAD"]
    command += ["--packed-only", "--packed-processes", "1", "--runs", "1", "--json", str(output)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "after/before" in finished.stdout
    rows = json.loads(output.read_text())["packed"]["rows"]
    assert {"gather_nd small", "ops.run gather_nd small"} <= {r["call"] for r in rows}
    assert all(r["before_seconds"] > 0 and r["after_seconds"] > 0 for r in rows)


def test_alone_variants_are_timed_after_the_interleaved_rounds() -> None:
    """A peer whose idle threads spin (onnxruntime's default session) runs its own rounds, so
    it takes no time from the variant timed after it."""
    order: list[str] = []

    def variant(name: str, alone: bool = False) -> Variant:
        return Variant(name, "test", "new output", lambda: order.append(name), 0, None, alone=alone)

    time_variants([variant("a"), variant("spinning", alone=True), variant("b")], 2, 1)
    assert order == ["a", "spinning", "b"] + ["a", "b"] * 3 + ["spinning"] * 3


def test_a_named_peer_is_its_fastest_configuration() -> None:
    """gather_nd_large's target names onnxruntime GatherND: the session timed with the others
    and onnxruntime's default (spinning, alone) both count, the faster one is compared."""
    target = next(t for t in TARGETS if t.case == "gather_nd_large" and t.ours == "numpy in")
    spinning = "onnxruntime GatherND, spinning, alone"
    timings = {
        "gather_nd_large": [
            _timing("numpy in", "dmlspec", "new output", 0.0021),
            _timing("onnxruntime GatherND", "onnxruntime", "new output", 0.0030),
            _timing(spinning, "onnxruntime", "new output", 0.0020),
        ]
    }
    result = next(r for r in check_targets(timings, 20.0, 1e-6) if r["target"] == target.text)
    assert result["met"] is False and spinning in result["measured"]


def test_a_verdict_says_when_the_limit_lies_within_the_rounds_noise() -> None:
    """A ratio's range between the rounds' quartiles (ours' first over the peer's third, ours'
    third over the peer's first): a miss whose range holds the limit is one this run's noise
    could turn; a bandwidth target's range comes from our own rounds."""
    trivial = _timing(TRIVIAL, "jax", "new output", [10.0, 10.2, 10.4, 10.6, 10.8])
    near = _timing("jax", "dmlspec", "new output", [20.0, 20.5, 21.0, 21.5, 22.0])
    far = _timing("jax", "dmlspec", "new output", [30.0, 30.1, 30.2, 30.3, 30.4])
    fill = _timing("jax out=", "dmlspec", "in place", [6.0e-3, 6.5e-3, 6.7e-3, 7.0e-3, 7.5e-3])
    results = check_targets(
        {
            "scatter_elements_small": [near, trivial],
            "gather_nd_small": [far, trivial],
            "fill_value_sequence_large": [fill],
        },
        20.0,
        1e-6,
    )
    by_case = {r["case"]: r for r in results if r.get("spread")}
    near_entry, far_entry = by_case["scatter_elements_small"], by_case["gather_nd_small"]
    assert near_entry["met"] is False and near_entry["within_noise"] is True
    assert near_entry["spread"] == pytest.approx([20.5 / 10.6, 21.5 / 10.2])
    assert "between the rounds' quartiles 1.93-2.11x, the limit within it" in near_entry["measured"]
    assert far_entry["met"] is False and far_entry["within_noise"] is False
    assert "the limit within it" not in far_entry["measured"]
    bandwidth = by_case["fill_value_sequence_large"]
    low, high = bandwidth["spread"]
    assert low < bandwidth["value"] < high and bandwidth["within_noise"] is True
    assert low == pytest.approx((1 << 26) / 7.0e-3 / 1e9 / 20.0)
    assert noise_note([near_entry, far_entry]) == " (1 of the 2 misses within the rounds' noise)"
    assert noise_note([bandwidth]) == ""  # met: no misses to count
    recorded_before = {k: v for k, v in near_entry.items() if k not in ("spread", "within_noise")}
    assert noise_note([recorded_before]) == ""


def test_one_round_has_no_spread() -> None:
    single = _timing("jax", "dmlspec", "new output", [2.0])
    assert single.quartiles == (2.0, 2.0)


def test_torch_peers_are_timed_alone_and_named_so() -> None:
    """torch's OpenMP threads spin after a parallel call: its calls run in rounds of their own,
    and a target naming a torch call ("torch scatter") finds it under its timed-alone name."""
    peer = torch_peer("scatter", "new output", lambda: None, 1)
    assert peer.alone and peer.library == "torch" and peer.name == "torch scatter, alone"
    target = next(t for t in TARGETS if t.against == "torch scatter")
    timings = {
        target.case: [
            _timing(target.ours, "dmlspec", "in place", 0.040),
            _timing("torch scatter_, alone", "torch", "in place", 0.030),
            _timing(peer.name, "torch", "new output", 0.050),
        ]
    }
    result = next(r for r in check_targets(timings, 20.0, 1e-6) if r["target"] == target.text)
    assert result["met"] is True and peer.name in result["measured"]


def test_the_benchmarks_torch_calls_are_all_timed_alone() -> None:
    pytest.importorskip("torch")
    for name in ("scatter_nd_small", "scatter_elements_small", "exp_small", "join_small"):
        variants = _tiny(name).variants  # type: ignore[attr-defined]
        torch_calls = [v for v in variants if v.library == "torch"]
        assert torch_calls and all(v.alone for v in torch_calls), name


@pytest.mark.parametrize(
    ("cold", "cache", "expected"),
    [(False, None, None), (False, "/users/cache", "/users/cache"), (True, None, "scratch")],
)
def test_the_suite_timing_uses_the_users_compilation_cache_when_warm(
    monkeypatch: pytest.MonkeyPatch, cold: bool, cache: str | None, expected: str | None
) -> None:
    """The benchmark turns JAX's persistent cache off for its kernel timings; the suite's warm
    run must not inherit that (it measured a run without any cache as 'warm')."""
    from dmlspec.bench import suite

    seen: dict[str, object] = {}

    def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        seen["command"] = command
        seen["cache"] = options["env"].get("DMLSPEC_JAX_CACHE")  # type: ignore[attr-defined]
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setenv("DMLSPEC_JAX_CACHE", "off")
    monkeypatch.setattr(suite.subprocess, "run", run)
    result = suite.suite_throughput(cold=cold, workers="2", cache=cache)
    assert result["error"] == "no results.json"
    assert seen["command"][-4:-2] == ["--workers", "2"]  # type: ignore[index]
    if expected == "scratch":
        assert str(seen["cache"]).endswith("jax-cache")
    else:
        assert seen["cache"] == expected


def test_suite_throughput_counts_cases_and_prints_the_checks_judged_beside(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Support cells share the cases that exercise them (dmlspec.conformance.plan): the rate
    is of distinct cases run (each one backend run), the checks they judged beside it."""
    from dmlspec.bench import run as bench_run
    from dmlspec.bench import suite

    def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        report = Path(command[command.index("--report") + 1])
        report.mkdir(parents=True)
        results = {
            "tests": [{"outcome": "passed"}] * 3,
            "cases": 40,
            "checks": 100,
            "coverage": {"hit": 3, "total": 3},
        }
        (report / "results.json").write_text(json.dumps(results))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(suite.subprocess, "run", run)
    times = iter([10.0, 10.5])
    monkeypatch.setattr(suite.time, "perf_counter", lambda: next(times))
    result = suite.suite_throughput(workers="2")
    assert (result["checks_per_second"], result["cases_per_second"]) == (200.0, 80.0)
    assert (result["cold"], result["programs_compiled"]) == (False, 0)  # nothing compiled
    bench_run._print_suite(result)
    bench_run._print_suite_targets(suite.suite_targets([result], 100))
    printed = capsys.readouterr().out
    assert "40 distinct cases run in 0.5 s = 80.0 cases/s (judging 100 checks)" in printed
    assert "MISSED suite (warm JAX cache): throughput >= 100 cases/s (distinct cases" in printed
    assert "met    suite (warm JAX cache): every operator's ci profile within 10 minutes" in printed


def _fake_conformance_adding(
    names: list[str],
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """A `subprocess.run` standing in for `dmlspec conformance`: adds these files to the cache
    folder the run was given and writes a results file."""

    def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        environment = options["env"]
        setting = environment.get("DMLSPEC_JAX_CACHE")  # type: ignore[attr-defined]
        if setting and setting != "off":
            Path(setting).mkdir(parents=True, exist_ok=True)
            for name in names:
                (Path(setting) / name).write_bytes(b"")
        report = Path(command[command.index("--report") + 1])
        report.mkdir(parents=True)
        results = {"tests": [], "cases": 4, "checks": 4, "coverage": {"hit": 0, "total": 0}}
        (report / "results.json").write_text(json.dumps(results))
        return subprocess.CompletedProcess(command, 0, "", "")

    return run


def test_a_suite_run_counts_the_programs_it_added_to_the_jax_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """JAX writes one "-cache" file per program into dmlspec's cache (no minimum compile
    time): the files a run adds are what it compiled, in a scratch cache (cold) or the user's."""
    from dmlspec.bench import suite

    added = ["jit_traced-1-cache", "jit_traced-2-cache", "jit_traced-2-atime"]
    monkeypatch.setattr(suite.subprocess, "run", _fake_conformance_adding(added))
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    cold = suite.suite_throughput(cold=True, workers="2")
    assert (cold["cold"], cold["programs_compiled"], cold["workers"]) == (True, 2, 2)
    users = tmp_path / "users-cache"
    users.mkdir()
    (users / "jit_traced-1-cache").write_bytes(b"")  # from an earlier run: not this one's
    warm = suite.suite_throughput(workers="2", cache=str(users))
    assert (warm["cold"], warm["programs_compiled"]) == (False, 1)
    assert suite.suite_throughput(workers="2", cache="off")["programs_compiled"] is None
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "jax-own"))
    assert suite.suite_throughput(workers="2", cache=str(users))["programs_compiled"] is None


def _suite_run(wall: float, programs: int | None, cold: bool) -> dict[str, object]:
    return {
        "wall_seconds": wall,
        "cases": 11902,
        "checks": 20000,
        "workers": 2,
        "cold": cold,
        "programs_compiled": programs,
    }


def test_a_cold_suite_runs_miss_names_the_compile_time_a_warm_run_did_without() -> None:
    """Run k's numbers: cold 162.2 s and warm 93.7 s for the same 11902 checks; the cold
    run's empty cache held 4109 programs afterwards."""
    from dmlspec.bench.suite import suite_targets

    cold, warm = _suite_run(162.2, 4109, cold=True), _suite_run(93.7, 0, cold=False)
    entries = suite_targets([cold, warm], 100)
    assert [(e["case"], e["met"]) for e in entries] == [
        ("suite (cold JAX cache)", False),
        ("suite (cold JAX cache)", True),
        ("suite (warm JAX cache)", True),
        ("suite (warm JAX cache)", True),
    ]
    assert entries[0]["measured"] == "73.4 cases/s (11902 cases in 162.2 s, judging 20000 checks)"
    assert entries[0]["evidence"] == [
        "at 100 cases/s this run may take 119.0 s",
        "it compiled 4109 programs (the entries it added to the JAX cache); the same "
        "cases with those programs read from the cache took 93.7 s, so compiling took 68.5 s "
        "(42% of the run), 33.3 ms of a core per program on 2 workers",
        "compiling may take 25.3 s of it: 12.3 ms per program, or 1518 programs at today's cost",
    ]
    assert entries[1]["measured"] == "162.2 s"
    # A "warm" run that compiled (the user's cache was empty) is no reference for the cold one.
    first = _suite_run(150.0, 4109, cold=False)
    (cold_rate, _, first_rate, _) = suite_targets([cold, first], 100)
    assert cold_rate["evidence"][1].startswith("it compiled 4109 programs (time it beside a run")
    assert first_rate["evidence"][1].startswith("it compiled 4109 programs (time it beside a run")


def test_a_warm_suite_runs_miss_says_nothing_was_compiled() -> None:
    from dmlspec.bench.suite import suite_targets

    slow_warm = _suite_run(150.0, 0, cold=False)
    (rate, minutes) = suite_targets([slow_warm], 100)
    assert not rate["met"] and minutes["met"]
    assert rate["evidence"][0] == "at 100 cases/s this run may take 119.0 s"
    assert rate["evidence"][1].startswith("no program was compiled (each read from JAX's cache)")
    over = suite_targets([_suite_run(601.0, 0, cold=False)], 100)
    assert over[1]["met"] is False
    (unknown, _) = suite_targets([_suite_run(150.0, None, cold=False)], 100)
    assert "how many programs it compiled is not known" in unknown["evidence"][1]


def _variant(name: str, library: str, mode: str, seconds: float, copy: float = 0.5) -> dict:
    return {
        "name": name,
        "library": library,
        "mode": mode,
        "median_seconds": seconds,
        "fraction_of_copy": copy,
        "correct": True,
    }


def _results() -> dict:
    """A run's JSON, cut down: one seed case, one family case with its references."""
    exp = [
        _variant("numpy in", "dmlspec", "new output", 4.8e-3),
        _variant("jax out=", "dmlspec", "in place", 4.5e-3, copy=0.74),
        _variant("jax.jit(ops.element_wise_exp) out=", families.KERNEL_JIT, "in place", 4.4e-3),
        _variant("jax.jit(jnp.exp) out=", families.PLAIN_XLA, "in place", 4.6e-3),
        _variant("onnxruntime Exp", "onnxruntime", "new output", 3.9e-3),
    ]
    gather = [
        _variant("ops.run, numpy in", "dmlspec", "new output", 3.7e-3),
        _variant("jax", "dmlspec", "new output", 3.3e-3),
    ]
    return {
        "cases": [
            {
                "name": "gather_nd_large",
                "family": "seed",
                "variants": gather,
                "best_peer": "onnxruntime GatherND",
                "best_peer_seconds": 3.27e-3,
            },
            {
                "name": "gather_nd_small",
                "size": "small",
                "family": "seed",
                "variants": gather,
                "best_peer": "numpy take",
                "best_peer_seconds": 1e-6,
            },
            {
                "name": "exp_large",
                "family": "element_wise",
                "variants": exp,
                "best_peer": "onnxruntime Exp",
                "best_peer_seconds": 3.9e-3,
            },
        ],
        "targets": [
            {
                "family": "seed",
                "target": "gather_nd_large: jax <= 1x onnxruntime GatherND",
                "measured": "1.01x",
                "met": False,
            },
            {
                "family": "seed",
                "target": "gather_nd_small: jax <= 2x trivial",
                "measured": "1.2x",
                "met": True,
            },
            {
                "family": "element_wise",
                "target": "exp_large: jax out= >= 50% of copy bandwidth",
                "measured": "74%",
                "met": True,
            },
            {"family": "element_wise", "target": "exp_large: n/a", "measured": "-", "met": None},
        ],
        "suite": [
            {
                "checks": 11902,
                "cases": 6485,
                "wall_seconds": 162.2,
                "checks_per_second": 73.4,
                "cold": True,
                "programs_compiled": 4109,
            },
            {
                "checks": 11902,
                "cases": 6485,
                "wall_seconds": 93.7,
                "checks_per_second": 127.0,
                "cold": False,
                "programs_compiled": 0,
            },
            {"error": "no results.json", "output_tail": []},
        ],
        "suite_targets": [
            {
                "case": "suite (cold JAX cache)",
                "target": "throughput >= 100 cases/s",
                "measured": "40.0 cases/s",
                "met": False,
                "evidence": ["it compiled 4109 programs"],
            },
        ],
    }


def test_markdown_renders_a_runs_large_cases_targets_and_suite() -> None:
    from dmlspec.bench.markdown import render_results

    text = render_results(_results())
    assert text.endswith("\n") and "\r" not in text
    lines = text.splitlines()
    assert lines[:6] == [
        "#### seed operators",
        "",
        "| case | `ops.run, numpy in` | `jax` | best peer | out= / donated % copy |",
        "| --- | ---: | ---: | --- | ---: |",
        "| gather_nd_large | 3.70 ms | 3.30 ms | onnxruntime GatherND 3.27 ms | - |",
        "",
    ]  # the small case is in the targets, not the table
    assert "Targets met: 1 of 2." in lines
    assert "- missed: gather_nd_large: jax <= 1x onnxruntime GatherND: 1.01x" in lines
    assert (
        "| case | `numpy in` | `jax out=` | program out= | plain XLA out= | best peer "
        "| out= / donated % copy |" in lines
    )
    assert (
        "| exp_large | 4.80 ms | 4.50 ms | 4.40 ms | 4.60 ms | onnxruntime Exp 3.90 ms | 74% |"
        in lines
    )
    assert "Targets met: 1 of 1." in lines  # a target without a verdict is not counted
    assert "| empty (cold) | 6485 | 11902 | 162.2 s | 40.0 | 4109 |" in lines
    assert "| the user's (warm) | 6485 | 11902 | 93.7 s | 69.2 | 0 |" in lines
    assert "- missed: suite (cold JAX cache): throughput >= 100 cases/s: 40.0 cases/s" in lines
    assert "  - it compiled 4109 programs" in lines
    assert render_results(_results()) == text  # deterministic
    small_by_size = _results()
    small_by_size["cases"][0]["size"] = "small"  # the JSON's size decides, not the name
    assert "| gather_nd_large |" not in render_results(small_by_size)


def test_bench_markdown_option_prints_a_results_file_and_names_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(_results()))
    assert bench_main(["--markdown", str(results)]) == 0
    assert capsys.readouterr().out.startswith("#### seed operators\n")
    assert bench_main(["--markdown", str(tmp_path / "absent.json")]) == 2
    assert "absent.json: cannot read file: No such file or directory" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"cases": [{"name": "x"}]}))
    assert bench_main(["--markdown", str(tmp_path / "other.json")]) == 2
    assert "not a results file --json wrote (no 'family' where expected)" in (
        capsys.readouterr().err
    )
    (tmp_path / "broken.json").write_text("{")
    assert bench_main(["--markdown", str(tmp_path / "broken.json")]) == 2
    assert "broken.json: invalid JSON at line 1 column 2" in capsys.readouterr().err


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(65 << 20)  # over the 64 MiB a file may hold, taking no disk


@pytest.mark.parametrize(
    ("plant", "said"),
    [
        pytest.param(lambda p: p.mkdir(), "is a folder", id="folder"),
        pytest.param(_fifo, "is a FIFO", id="fifo"),
        pytest.param(lambda p: p.symlink_to("/dev/zero"), "only regular files", id="dev-zero"),
        pytest.param(_sparse, "over the limit", id="huge"),
        pytest.param(lambda p: p.write_text("[" * 100_000), "nested more than", id="nested"),
        pytest.param(lambda p: p.write_bytes(b"\xff{}"), "not UTF-8", id="binary"),
    ],
)
def test_bench_markdown_reads_only_a_bounded_regular_file(
    tmp_path: Path, plant: Callable[[Path], object], said: str
) -> None:
    """In a process of its own: a FIFO read without care would hang, /dev/zero never end."""
    path = tmp_path / "results.json"
    plant(path)
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--markdown", str(path)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's dmlspec
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, env=environment
    )
    assert finished.returncode == 2 and not finished.stdout, finished.stderr[-2000:]
    lines = finished.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench: --markdown "), finished.stderr[-2000:]
    assert said in lines[0]


@pytest.mark.parametrize(
    "results",
    [
        [1, 2],
        {"cases": 5},
        {"cases": [1]},
        {"cases": [{"family": ["x"]}]},
        {"cases": [{"family": "x", "name": "x_large", "variants": "abc"}], "targets": []},
        {"cases": [{"family": "x", "name": "n", "size": "small"}], "targets": [5]},
        {"cases": [], "targets": [], "suite": 5},
        {"cases": [], "suite": [{"checks": 1, "cases": 1, "wall_seconds": "x"}]},
        {"cases": [], "suite": [{"wall_seconds": 1, "checks_per_second": 1}]},
    ],
)
def test_bench_markdown_names_a_misshapen_results_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], results: object
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    assert bench_main(["--markdown", str(path)]) == 2
    captured = capsys.readouterr()
    assert not captured.out
    assert captured.err.count("\n") == 1
    assert "not a results file --json wrote (" in captured.err


def test_markdown_escapes_pipes_line_breaks_and_control_characters_from_names() -> None:
    from dmlspec.bench.markdown import render_results

    results = _results()
    results["cases"][0]["name"] = "gather|nd\n_large\x1b[31m"
    results["cases"][0]["best_peer"] = "peer|x"
    results["targets"][0]["target"] = "two\nlines"
    text = render_results(results)
    assert "\x1b" not in text and "\r" not in text
    assert "| gather\\|nd _large\\x1b[31m | 3.70 ms | 3.30 ms | peer\\|x 3.27 ms | - |" in text
    assert "- missed: two lines: 1.01x" in text
    table = [line for line in text.splitlines() if line.startswith("| gather")]
    assert len(table) == 1 and table[0].replace("\\|", "").count("|") == 6


def test_the_readmes_run_tables_are_the_rendering_of_the_run_it_names() -> None:
    """The README shows one run "rendered by `--markdown FILE`": edited by hand, or left behind
    when the JSON is replaced, it would fail here."""
    from dmlspec.bench.markdown import render_results

    readme = (ROOT / "README.md").read_text()
    named = re.findall(r"--markdown\s+(docs/benchmarks/\S+?\.json)", readme)
    assert named, "the README names no run rendered by --markdown"
    for path in named:
        assert render_results(json.loads((ROOT / path).read_text())) in readme, path


# The convolution family: compute-bound cases, read in GFLOP/s against the matrix-multiply
# peak, and targets against plain XLA.


def test_the_convolution_familys_cases_build_and_run_at_tiny_sizes() -> None:
    grouped = case_families()
    for family_case in FAMILY_CASES:
        family = family_case.family
        assert grouped[family_case.name] == family in FAMILIES_WITHOUT_NUMPY
        case = _tiny(family_case.name)
        assert case.size == "large" and case.family == family  # type: ignore[attr-defined]
        variants = case.variants  # type: ignore[attr-defined]
        assert all(v.flops > 0 for v in variants), family_case.name
        timings = time_variants(variants, 1, 0, 1, case.expected, case.tolerance)  # type: ignore[attr-defined]
        assert all(t.correct for t in timings), [
            (t.variant.label, t.correct) for t in timings if not t.correct
        ]
        names = {(v.library, v.name) for v in variants}
        ours = ("numpy in", "jax", "jax out=") if family_case.takes_out else ("numpy in", "jax")
        assert {("dmlspec", n) for n in ours} <= names
        assert ("dmlspec", "jax out=") in names or not family_case.takes_out
        assert any(lib == PLAIN_XLA and n.endswith(ON_NUMPY_ARRAYS) for lib, n in names)
        assert "onnxruntime" in {v.library for v in variants}
        targeted = {(t.ours, t.against) for t in TARGETS if t.case == family_case.name}
        device = ("jax out=", PLAIN_XLA_OUT) if family_case.takes_out else ("jax", PLAIN_XLA_NEW)
        copy = {("jax out=", "copy")} if family_case.memory_bound else set()
        assert targeted == {("numpy in", PLAIN_XLA_NUMPY_IN), device} | copy
    named = {c.name for c in FAMILY_CASES}
    assert named >= {"convolution_3x3", "gemm_float16", "attention", "max_pool", "linear_resize"}
    assert named >= {"batch_normalization", "layer_normalization", "lstm"}


def test_flops_gflops_and_the_share_of_the_peak_on_known_numbers() -> None:
    from dmlspec.bench.run import _case_summary

    assert gemm_flops(1024, 1024, 1024) == 2 * 1024**3 == 2_147_483_648
    assert gemm_flops(2, 3, 4, batch=5) == 240
    # ResNet-50's 3x3 of stage 1: 64 -> 64 channels at 56x56, 64 * 9 products per output.
    assert convolution_flops(1, 64, (56, 56), 64, (3, 3)) == 231_211_008
    assert convolution_flops(1, 256, (14, 14), 1, (3, 3)) == 2 * 256 * 196 * 9  # depthwise
    assert gigaflops(2_000_000_000, 0.1) == pytest.approx(20.0)
    variant = Variant("jax out=", "dmlspec", "in place", lambda: None, 1 << 20, flops=4 * 10**9)
    timing = Timing(variant, [0.2, 0.1, 0.4], correct=True, calls=3)
    assert timing.gigaflops_per_second == pytest.approx(20.0)  # at the median, 0.2 s
    summary = _case_summary("gemm_float32", [timing], 20.0, None, peak_gflops=80.0)
    (row,) = summary["variants"]
    assert row["gflops"] == pytest.approx(20.0) and row["fraction_of_peak"] == pytest.approx(0.25)
    assert row["flops"] == 4 * 10**9
    no_peak = _case_summary("gemm_float32", [timing], 20.0, None)["variants"][0]
    assert no_peak["fraction_of_peak"] is None
    bytes_only = _timing("np.add", "numpy", "new output", 0.01)
    assert "gflops" not in _case_summary("add_large", [bytes_only], 20.0, None)["variants"][0]


def test_the_matmul_peak_is_the_fastest_matrix_multiply_measured() -> None:
    peak = measure_matmul_peak(runs=1, size=64)
    assert peak.size == 64 and peak.gflops == max(peak.measured.values()) > 0
    if jax.devices()[0].platform == "cpu":  # NumPy's BLAS competes only on the CPU
        assert set(peak.measured) == {"jnp.matmul on the cpu", "numpy BLAS np.matmul"}
    best = max(peak.measured, key=peak.measured.__getitem__)
    assert peak.source == f"{best}, 64^3 FLOAT32"


def test_the_peak_is_the_higher_of_the_measurements_before_and_after_the_cases() -> None:
    before = MatmulPeak(30.0, "numpy BLAS np.matmul, 2048^3 FLOAT32", 2048, {"a": 25.0, "b": 30.0})
    after = MatmulPeak(40.0, "a, 2048^3 FLOAT32", 2048, {"a": 40.0, "b": 12.0})
    higher = higher_peak(before, after)
    assert higher.measured == {"a": 40.0, "b": 30.0}
    assert (higher.gflops, higher.source) == (40.0, "a, 2048^3 FLOAT32")
    assert higher_peak(after, before) == higher


def _compute_case(
    numpy_in: float, out: float, peak_gflops: float | None = 50.0
) -> dict[str, dict[str, Any]]:
    flops = 2 * 10**9

    def timed(name: str, library: str, mode: str, seconds: float) -> Timing:
        variant = Variant(name, library, mode, lambda: None, 1 << 20, flops=flops)
        return Timing(variant, [seconds], correct=True, calls=1)

    case = [
        timed("numpy in", "dmlspec", "new output", numpy_in),
        timed("jax", "dmlspec", "new output", 0.100),
        timed("jax out=", "dmlspec", "in place", out),
        timed("jax.jit(ops.gemm) out=", KERNEL_JIT, "in place", 0.100),
        timed("jax.jit(jnp.matmul)", PLAIN_XLA, "new output", 0.090),
        timed("jax.jit(jnp.matmul) out=", PLAIN_XLA, "in place", 0.100),
        timed(f"jax.jit(jnp.matmul) {ON_NUMPY_ARRAYS}", PLAIN_XLA, "new output", 0.100),
        timed("onnxruntime MatMul", "onnxruntime", "new output", 0.010),  # information only
    ]
    results = check_targets({"gemm_float32": case}, 20.0, 1e-6, peak_gflops=peak_gflops)
    return {r["target"]: r for r in results}


def test_convolution_targets_compare_with_plain_xla_and_never_with_the_peers() -> None:
    results = _compute_case(numpy_in=0.105, out=0.120)
    numpy_in = results[f"gemm_float32: numpy in <= 1.1x {PLAIN_XLA_NUMPY_IN}"]
    assert numpy_in["met"] is True and numpy_in["value"] == pytest.approx(1.05)
    assert f"vs jax.jit(jnp.matmul) {ON_NUMPY_ARRAYS} 100.000 ms" in numpy_in["measured"]
    out = results[f"gemm_float32: jax out= <= 1.1x {PLAIN_XLA_OUT}"]
    assert out["met"] is False and out["value"] == pytest.approx(1.2)
    assert "vs jax.jit(jnp.matmul) out= 100.000 ms" in out["measured"]
    # Its GFLOP/s against the peak (2 GFLOP in 120 ms: 16.7 GFLOP/s, a third of 50).
    assert (
        "jax out=: 120.000 ms, 16.7 GFLOP/s = 33% of the matrix-multiply peak" in (out["evidence"])
    )
    assert any(
        n.startswith("fastest peer: onnxruntime MatMul (new output) 10.000 ms, 200.0 GFLOP/s")
        for n in out["evidence"]
    )
    assert len(results) == 2  # the onnxruntime peer, 10x faster, is no target
    edge = _compute_case(numpy_in=0.110, out=0.110)
    assert all(e["met"] for e in edge.values())  # 1.1x is within the limit
    without_peak = _compute_case(numpy_in=0.2, out=0.2, peak_gflops=None)
    missed = without_peak[f"gemm_float32: jax out= <= 1.1x {PLAIN_XLA_OUT}"]
    assert not any("GFLOP/s" in n for n in missed["evidence"])  # bytes as before


def test_convolution_cases_need_no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(families, "optional", lambda name: None)
    convolution = _tiny("convolution_depthwise")
    libraries = {v.library for v in convolution.variants}  # type: ignore[attr-defined]
    assert libraries == {"dmlspec", KERNEL_JIT, PLAIN_XLA, "onnxruntime"}
    gemm = _tiny("gemm_float32")
    assert {v.library for v in gemm.variants} == libraries | {"numpy"}  # type: ignore[attr-defined]


def test_the_dot_product_bound_admits_any_summation_order_and_no_more() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 1, 8, 512)).astype(np.float32)
    b = rng.standard_normal((1, 1, 512, 8)).astype(np.float32)
    operator = operator_json(
        "GEMM",
        {"ATensor": a, "BTensor": b, "OutputTensor": np.zeros((1, 1, 8, 8), np.float32)},
        TransA="DML_MATRIX_TRANSFORM_NONE",
        TransB="DML_MATRIX_TRANSFORM_NONE",
        Alpha=1.0,
        Beta=0.0,
    )
    expected, tolerance = dot_product_expected(operator, {"ATensor": a, "BTensor": b})
    assert expected.dtype == np.float32 and expected.shape == (1, 1, 8, 8)
    assert "GemmK + 3" in tolerance.rule
    products = a[0, 0][:, :, None] * b[0, 0][None, :, :]  # (8, 512, 8), float32
    forwards = np.cumsum(products, axis=1, dtype=np.float32)[:, -1][None, None]
    backwards = np.cumsum(products[:, ::-1], axis=1, dtype=np.float32)[:, -1][None, None]
    assert matches(forwards, expected, tolerance) and matches(backwards, expected, tolerance)
    dropped = expected.copy()
    dropped[0, 0, 2, 3] -= products[2, 0, 3] + np.float32(1.0)  # a product left out, and more
    assert not matches(dropped, expected, tolerance)
    with pytest.raises(ValueError, match="not judged by the dot-product model"):
        x = np.ones((4, 4), np.float32)
        dot_product_expected(
            operator_json("ELEMENT_WISE_EXP", {"InputTensor": x, "OutputTensor": x}),
            {"InputTensor": x},
        )


def test_markdown_shows_a_compute_familys_gflops_and_share_of_the_peak() -> None:
    from dmlspec.bench.markdown import render_results

    def variant(name: str, library: str, mode: str, seconds: float) -> dict[str, object]:
        return {
            **_variant(name, library, mode, seconds),
            "flops": 2 * 10**9,
            "gflops": 2 / seconds,
            "fraction_of_peak": 2 / seconds / 50.0,
        }

    results = {
        "cases": [
            {
                "name": "gemm_float32",
                "size": "large",
                "family": "convolution",
                "variants": [
                    variant("numpy in", "dmlspec", "new output", 0.110),
                    variant("jax out=", "dmlspec", "in place", 0.100),
                    variant("jax.jit(jnp.matmul) out=", PLAIN_XLA, "in place", 0.095),
                    variant(
                        f"jax.jit(jnp.matmul) {ON_NUMPY_ARRAYS}", PLAIN_XLA, "new output", 0.105
                    ),
                ],
                "best_peer": "numpy np.matmul",
                "best_peer_seconds": 0.09,
            }
        ],
        "targets": [],
    }
    lines = render_results(results).splitlines()
    assert lines[0] == "#### convolution and matrix multiplication"
    assert lines[2] == (
        "| case | `numpy in` | `jax out=` | plain XLA out= | plain XLA on NumPy | best peer "
        "| out= GFLOP/s (% peak) |"
    )
    assert lines[4] == (
        "| gemm_float32 | 110.00 ms | 100.00 ms | 95.00 ms | 105.00 ms "
        "| numpy np.matmul 90.00 ms | 20.0 (40%) |"
    )


def test_a_convolution_run_prints_gflops_and_the_peak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DMLSPEC_JAX_CACHE", "off")  # what main sets, undone after the test
    monkeypatch.setattr(families, "optional", lambda name: None)  # as without torch
    output = tmp_path / "bench.json"
    command = ["--family", "convolution", "--cases", "gemm_float16", "add_small"]
    command += ["--runs", "1", "--warmup", "0", "--suite", "none", "--scale", "0.002"]
    assert bench_main([*command, "--json", str(output)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^matrix-multiply peak: [\d.]+ GFLOP/s \(.*64\^3 FLOAT32", printed, re.M)
    assert "GFLOP/s  % peak" in printed and "out= GFLOP/s  out= % peak" in printed
    assert "gemm_float16: numpy in <= 1.1x plain XLA on NumPy arrays" in printed
    results = json.loads(output.read_text())
    assert results["matmul_peak"]["size"] == 64
    before, after = results["matmul_peaks_before_and_after"]
    assert results["matmul_peak"]["gflops"] == max(before["gflops"], after["gflops"])
    assert "GFLOP/s before the cases" in printed
    (case,) = results["cases"]
    assert case["name"] == "gemm_float16" and case["family"] == "convolution"
    assert all(v["fraction_of_peak"] > 0 for v in case["variants"])
    assert {t["target"] for t in results["targets"]} == {
        f"gemm_float16: numpy in <= 1.1x {PLAIN_XLA_NUMPY_IN}",
        f"gemm_float16: jax out= <= 1.1x {PLAIN_XLA_OUT}",
    }
