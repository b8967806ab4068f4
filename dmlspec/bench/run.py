"""The benchmark's command line: `python scripts/bench.py --help`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .accelerator import DeviceRates, measure_device
from .peak import PEAK_SIZE, MatmulPeak, higher_peak, measure_matmul_peak

__all__ = ["main"]


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write the results as every dmlspec output is written: a link at `path` is replaced."""
    from ..safeio import write_file

    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(
        path.parent, path.name, (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode()
    )


DESCRIPTION = """\
Time dmlspec's JAX kernels against their peers (numpy, onnxruntime, torch when installed) in
one process, interleaved, on the same machine; measure the machine's copy bandwidth and the
cost of a trivial jitted call in the same run; check the performance targets; time the
conformance suite. Medians over --runs rounds after warm-up. GB/s counts bytes read plus
bytes written that a perfect implementation needs (see dmlspec/bench/cases.py); the copy
bandwidth counts np.copyto's reads plus writes the same way. On an accelerator, "% copy" is
against the device's copy bandwidth (jitted copies queued back to back), and the host-device
transfer rates and the floor of one waited call are measured and read into the misses. The
compute-bound cases (the convolution family) are also read in GFLOP/s (a multiply-add counts
two), against the matrix-multiply peak measured in the same run ("% peak": see
dmlspec/bench/peak.py for which matrix multiply, on the CPU or on an accelerator).
"""


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=DESCRIPTION)
    parser.add_argument("--runs", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds (default 3)")
    parser.add_argument("--cases", nargs="+", metavar="CASE", help="only these cases")
    parser.add_argument(
        "--family",
        nargs="+",
        metavar="FAMILY",
        help="only the cases of these families (see --list; the seed operators' are 'seed')",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the cases (with their families) and exit"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="RESULTS",
        help="print the Markdown tables of a results file --json wrote, and exit",
    )
    parser.add_argument(
        "--suite",
        choices=("warm", "cold", "both", "none"),
        default="warm",
        help="time `dmlspec conformance --backend jax --profile ci` with the user's JAX "
        "compilation cache (warm), an empty one (cold), both, or not at all",
    )
    parser.add_argument(
        "--compilation-cache",
        action="store_true",
        help="let kernel timing use JAX's persistent compilation cache (off by default, so "
        "first-call times are real compile times)",
    )
    parser.add_argument(
        "--packed-against",
        metavar="REV",
        help="also time the packed path (tensors without Strides) at git revision REV and "
        "in this checkout, alternating processes (e.g. the commit before a change)",
    )
    parser.add_argument(
        "--packed-processes",
        type=int,
        default=3,
        help="with --packed-against: processes per side (default 3)",
    )
    parser.add_argument(
        "--packed-only",
        action="store_true",
        help="with --packed-against: run only that comparison",
    )
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    if args.markdown:
        return _print_markdown(args.markdown)
    if args.runs < 1 or args.warmup < 0:
        print("bench: --runs must be at least 1 and --warmup at least 0", file=sys.stderr)
        return 2
    users_cache = os.environ.get("DMLSPEC_JAX_CACHE")  # the suite's warm run uses it
    if not args.compilation_cache:
        os.environ["DMLSPEC_JAX_CACHE"] = "off"
    # Imported here: the cache setting above must be in place before any kernel runs.
    import jax

    from .cases import FAMILY_CASES, build_cases, case_families
    from .peers import versions
    from .suite import suite_targets, suite_throughput
    from .targets import SUITE_CASES_PER_SECOND, SUITE_WORKERS, check_targets
    from .timing import MiB, copy_bandwidth, fault_cost

    builders = build_cases(args.scale)
    families = case_families()
    if args.list:
        width = max(map(len, builders))
        print("\n".join(f"{name.ljust(width)}  {families[name]}" for name in builders))
        return 0
    packed = None
    if args.packed_against:
        from .packed import compare_packed, render

        repo = Path(__file__).resolve().parents[2]
        packed = compare_packed(
            args.packed_against, repo, processes=args.packed_processes, rounds=args.runs
        )
        print(render(packed) + "\n")
        if args.packed_only:
            if args.json:
                _write_json(args.json, {"packed": packed})
            return 0
    names = args.cases or list(builders)
    unknown = [n for n in names if n not in builders]
    if unknown:
        print(f"bench: unknown cases {unknown}; known: {', '.join(builders)}", file=sys.stderr)
        return 2
    if args.family:
        known = sorted(set(families.values()))
        if unknown := [f for f in args.family if f not in known]:
            print(f"bench: unknown families {unknown}; known: {', '.join(known)}", file=sys.stderr)
            return 2
        names = [n for n in names if families[n] in args.family]

    device = jax.devices()[0]
    copy_size = max(int(256 * MiB * min(args.scale, 1.0)), MiB)
    copy_before, copy_seconds = copy_bandwidth(copy_size, args.runs)
    fault_seconds = fault_cost()
    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "jax_device": f"{device.platform}: {device.device_kind}",
        "versions": versions(),
    }
    _print_header(machine, copy_before, copy_size, fault_seconds)
    rates = measure_device(copy_size, args.runs) if device.platform != "cpu" else None
    device_copy = None if rates is None else rates.copy_gbps
    if rates is not None:
        _print_device(rates, copy_size)
    peak_size = max(int(PEAK_SIZE * min(args.scale, 1.0)), 64)
    peaks: list[MatmulPeak] = []
    if {c.name for c in FAMILY_CASES} & set(names):  # only when a compute-bound case runs
        peaks.append(measure_matmul_peak(args.runs, peak_size))
        _print_peak(peaks[0])
    peak_gflops = peaks[0].gflops if peaks else None

    timings = {}
    cases_out = []
    family = None
    for name in names:
        if families[name] != family:
            family = families[name]
            print(f"\n== {family} ==")
        case = builders[name]()
        timings[name] = _time_case(case, args.runs, args.warmup)
        cases_out.append(
            _case_summary(name, timings[name], copy_before, device_copy, peak_gflops)
            | {"family": family, "size": case.size, "shape": case.shape, "notes": _case_notes(case)}
        )
        del case  # the timings keep no arrays: the next case has the memory
        _print_case(cases_out[-1])

    copy_after, more_seconds = copy_bandwidth(copy_size, args.runs)
    copy_gbps = 2 * copy_size / statistics.median(copy_seconds + more_seconds) / 1e9
    print(
        f"\ncopy bandwidth: {copy_before:.1f} GB/s before the cases, {copy_after:.1f} after; "
        f"{copy_gbps:.1f} GB/s over both is the reference"
    )
    peak = None
    if peaks:
        peaks.append(measure_matmul_peak(args.runs, peak_size))
        peak = higher_peak(*peaks)
        peak_gflops = peak.gflops
        _share_of_peak(cases_out, peak_gflops)
        print(
            f"matrix-multiply peak: {peaks[0].gflops:.1f} GFLOP/s before the cases, "
            f"{peaks[1].gflops:.1f} after; {peak.gflops:.1f} GFLOP/s ({peak.source}), the "
            "higher, is the reference"
        )
    targets = check_targets(
        timings, device_copy or copy_gbps, fault_seconds, families, rates, peak_gflops
    )
    _print_summary(cases_out)
    _print_targets(targets)

    suites = []
    if args.suite != "none":
        for cold in {"warm": [False], "cold": [True], "both": [True, False]}[args.suite]:
            result = suite_throughput(cold=cold, workers=SUITE_WORKERS, cache=users_cache)
            suites.append(result)
            _print_suite(result)
    suite_entries = suite_targets(suites, SUITE_CASES_PER_SECOND)
    _print_suite_targets(suite_entries)

    if args.json:
        payload = {
            "machine": machine,
            "copy_bandwidth_gbps": copy_gbps,
            "device_copy_bandwidth_gbps": device_copy,
            "device": None if rates is None else dataclasses.asdict(rates),
            "matmul_peak": None if peak is None else dataclasses.asdict(peak),
            "matmul_peaks_before_and_after": [dataclasses.asdict(p) for p in peaks],
            "seconds_per_page_fault": fault_seconds,
            "runs": args.runs,
            "warmup": args.warmup,
            "cases": cases_out,
            "targets": targets,
            "suite": suites,
            "suite_targets": suite_entries,
            "packed": packed,
        }
        _write_json(args.json, payload)
        print(f"\nresults: {args.json}")
    return 0


def _print_markdown(path: Path) -> int:
    """Print a results file's tables; anything else (unreadable, not a regular file, too large
    or deep, not JSON, not shaped as --json writes it) is one line and exit 2."""
    from ..jsonio import JsonReadError, read_json_file
    from ..limits import cut
    from .markdown import render_results

    try:
        results = read_json_file(path)
    except JsonReadError as error:
        print(f"bench: --markdown {path}: {error}", file=sys.stderr)
        return 2
    try:
        if not isinstance(results, dict):
            raise TypeError(f"a {type(results).__name__}, not an object")
        text = render_results(results)
    except KeyError as error:
        kind = f"no {cut(repr(error.args[0]), 80)} where expected"
    except (TypeError, ValueError, AttributeError, IndexError) as error:
        kind = cut(f"{type(error).__name__}: {error}", 200)
    else:
        sys.stdout.write(text)
        return 0
    print(f"bench: --markdown {path}: not a results file --json wrote ({kind})", file=sys.stderr)
    return 2


def _time_case(case: Any, runs: int, warmup: int) -> list[Any]:
    """Time a case's variants (a small case's with the trivial jitted calls, 200 calls per
    round); summarize what XLA compiled a large case's calls into; then drop the variants'
    callables, which hold the case's arrays."""
    from .hlo import summarize
    from .timing import time_variants
    from .variants import trivial_calls

    variants, calls = case.variants, 1
    if case.size == "small":
        variants, calls = [*variants, *trivial_calls()], 200
    timings = time_variants(variants, runs, warmup, calls, case.expected, case.tolerance)
    for timing in timings:
        variant = timing.variant
        if case.size == "large" and variant.compiled is not None:
            try:
                timing.compiled = summarize(variant.compiled()).text(case.expected.nbytes)
            except Exception as error:  # evidence only: a failure must not end the run
                timing.compiled = f"(its HLO could not be read: {type(error).__name__}: {error})"
        timing.variant = dataclasses.replace(variant, run=_released, fetch=None, compiled=None)
    return timings


def _released() -> None:
    raise RuntimeError("this variant was timed and released")


def _case_notes(case: Any) -> list[str]:
    notes = list(case.notes)
    if case.tolerance is not None:
        notes.append(f"outputs judged within {case.tolerance.rule}")
    return notes


def _case_summary(
    name: str,
    timings: list[Any],
    copy_gbps: float,
    device_copy: float | None,
    peak_gflops: float | None = None,
) -> dict[str, Any]:
    """A case's results as the JSON holds them; a variant that counts FLOPs also has its
    GFLOP/s and, with a measured peak, their share of it."""
    from .targets import PEER_LIBRARIES

    reference = device_copy or copy_gbps
    # A peer that computed a wrong result is not a peer to compare with.
    peers = [t for t in timings if t.variant.library in PEER_LIBRARIES and t.correct is not False]
    best_peer = {
        mode: min(
            (t for t in peers if t.variant.mode == mode), key=lambda t: t.median, default=None
        )
        for mode in ("new output", "in place")
    }
    best_any = min(peers, key=lambda t: t.median, default=None)
    variants = []
    for timing in timings:
        variant = timing.variant
        same_mode = best_peer.get(variant.mode)
        variants.append(
            {
                "name": variant.name,
                "library": variant.library,
                "mode": variant.mode,
                "median_seconds": timing.median,
                "quartile_seconds": list(timing.quartiles),
                "rounds": len(timing.seconds),
                "gbps": timing.gigabytes_per_second,
                "fraction_of_copy": timing.gigabytes_per_second / reference,
                "ratio_to_best_peer": timing.median / best_any.median if best_any else None,
                "ratio_to_best_peer_same_mode": (
                    timing.median / same_mode.median if same_mode else None
                ),
                "first_call_seconds": timing.first_call,
                "faults_per_call": timing.faults_per_call,
                "correct": timing.correct,
                "bytes_moved": variant.bytes_moved,
                "compiled": timing.compiled,
            }
        )
        if variant.flops:
            rate = timing.gigaflops_per_second
            variants[-1].update(
                flops=variant.flops,
                gflops=rate,
                fraction_of_peak=rate / peak_gflops if peak_gflops else None,
            )
    return {
        "name": name,
        "best_peer": best_any.variant.label if best_any else None,
        "best_peer_seconds": best_any.median if best_any else None,
        "variants": variants,
    }


def _print_header(
    machine: dict[str, Any], copy_gbps: float, copy_size: int, fault_seconds: float
) -> None:
    print(f"machine: {machine['platform']}, {machine['cpus']} CPUs; JAX on {machine['jax_device']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in machine["versions"].items()))
    print(
        f"copy bandwidth (np.copyto of {copy_size >> 20} MiB, read + write): {copy_gbps:.1f} GB/s;"
        f" a fresh 4 KiB page costs {fault_seconds * 1e6:.2f} us to fault in"
    )


def _print_device(rates: DeviceRates, size: int) -> None:
    print(
        f"device ({rates.platform}) copy bandwidth (jitted copies of {size >> 20} MiB queued "
        f"back to back, read + write): {rates.copy_gbps:.1f} GB/s, the reference of this run's "
        f"% copy; one copy and its wait: {rates.single_copy_gbps:.1f} GB/s"
    )
    print(
        f"host to device (jax.device_put of a NumPy array): {rates.host_to_device_gbps:.1f} GB/s;"
        f" device to host (np.asarray): {rates.device_to_host_gbps:.1f} GB/s; a trivial jitted "
        f"call and its wait: {rates.call_floor_seconds * 1e6:.1f} us"
    )


def _share_of_peak(cases: list[dict[str, Any]], peak_gflops: float) -> None:
    """Read the cases' GFLOP/s against the run's peak (measured after them too)."""
    for case in cases:
        for variant in case["variants"]:
            if "gflops" in variant:
                variant["fraction_of_peak"] = variant["gflops"] / peak_gflops


def _print_peak(peak: MatmulPeak) -> None:
    measured = "; ".join(f"{name} {rate:.1f}" for name, rate in peak.measured.items())
    print(
        f"matrix-multiply peak: {peak.gflops:.1f} GFLOP/s ({peak.source}, the fastest of: "
        f"{measured} GFLOP/s), the reference of each case's % peak (the summary's: the higher "
        "of this and the peak after the cases)"
    )


def _rate_columns(variant: dict[str, Any]) -> tuple[str, str]:
    """A variant's rate and its share: GFLOP/s of the peak where it counts FLOPs, else GB/s of
    the copy bandwidth."""
    if "gflops" in variant:
        share = variant["fraction_of_peak"]
        return f"{variant['gflops']:.1f}", "-" if share is None else f"{share:.0%}"
    return f"{variant['gbps']:.1f}", f"{variant['fraction_of_copy']:.0%}"


def _print_case(case: dict[str, Any]) -> None:
    print(f"\n{case['name']}: {case['shape']} (best peer: {case['best_peer']})")
    compute = any("gflops" in v for v in case["variants"])
    header = (
        "variant",
        "mode",
        "median",
        "GFLOP/s" if compute else "GB/s",
        "% peak" if compute else "% copy",
        "x best peer",
        "faults",
        "1st call",
        "output",
    )
    rows = [header]
    for v in case["variants"]:
        median = v["median_seconds"]
        rows.append(
            (
                f"{v['library']}: {v['name']}",
                v["mode"],
                _time(median),
                *_rate_columns(v),
                f"{v['ratio_to_best_peer']:.2f}" if v["ratio_to_best_peer"] else "-",
                f"{v['faults_per_call']:.0f}",
                f"{v['first_call_seconds']:.3f} s",
                {True: "ok", False: "WRONG", None: "-"}[v["correct"]],
            )
        )
    _print_rows(rows)
    for note in case["notes"]:
        print(f"  ({note})")


def _print_rows(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _print_summary(cases: list[dict[str, Any]]) -> None:
    """One line per family case, grouped by family: dmlspec's calls, the kernel's program
    jitted whole and plain XLA (both writing into a donated buffer, as out= does), the best
    peer, and out='s share of the copy bandwidth; for a compute-bound family (its cases count
    FLOPs) plain XLA on the NumPy arrays too, and out='s GFLOP/s and share of the peak."""
    from .families import KERNEL_JIT, PLAIN_XLA, is_plain_xla_on_numpy

    groups: dict[str, list[tuple[str, ...]]] = {}
    for case in cases:
        found = {(v["library"], v["mode"], v["name"]): v for v in case["variants"]}
        ours = {name: v for (library, _, name), v in found.items() if library == "dmlspec"}
        if "numpy in" not in ours:
            continue  # the seed cases: their own table above
        donated = {library: v for (library, mode, _), v in found.items() if mode == "in place"}
        out = ours.get("jax out=")  # none where the ops function has no out= (attention)
        compute = any("gflops" in v for v in ours.values())
        plain_numpy = next(
            (v for (lib, _, n), v in found.items() if is_plain_xla_on_numpy(lib, n)),
            None,
        )
        header: tuple[str, ...] = ("case", "numpy in")
        timed = [ours.get("numpy in")]
        if compute:
            header += ("plain XLA on NumPy",)
            timed.append(plain_numpy)
        header += ("jax", "jax out=", "program out=", "plain XLA out=", "best peer")
        timed += [ours.get("jax"), out, donated.get(KERNEL_JIT), donated.get(PLAIN_XLA)]
        peer = (
            f"{case['best_peer']} {_time(case['best_peer_seconds'])}" if case["best_peer"] else "-"
        )
        rates: tuple[str, ...]
        if compute:
            header += ("out= GFLOP/s", "out= % peak")
            rates = _rate_columns(out) if out is not None else ("-", "-")
        else:
            header += ("out= % copy",)
            large = case["name"].endswith("_large")
            rates = (f"{out['fraction_of_copy']:.0%}" if out and large else "-",)
        groups.setdefault(case["family"], [header]).append(
            (
                case["name"],
                *(_time(v["median_seconds"]) if v else "-" for v in timed),
                peer,
                *rates,
            )
        )
    for family, rows in groups.items():
        print(f"\nsummary, {family} (medians):")
        _print_rows(rows)


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _print_targets(targets: list[dict[str, Any]]) -> None:
    from .markdown import noise_note

    print("\ntargets (medians of this run):")
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in targets:
        groups.setdefault(entry["family"], []).append(entry)
    for family, entries in groups.items():
        met = sum(e["met"] is True for e in entries)
        print(f"  {family}: {met} of {len(entries)} met{noise_note(entries)}")
        # A case's targets together; the evidence of its misses once, after them.
        for case in dict.fromkeys(e["case"] for e in entries):
            notes: dict[str, None] = {}
            for entry in (e for e in entries if e["case"] == case):
                print(f"    {_verdict(entry)} {entry['target']}: {entry['measured']}")
                notes.update(dict.fromkeys(entry.get("evidence", [])))
            _print_evidence(notes)


def _verdict(entry: dict[str, Any]) -> str:
    return {True: "met   ", False: "MISSED", None: "n/a   "}[entry["met"]]


def _print_evidence(notes: Iterable[str]) -> None:
    for note in notes:
        print(f"             - {note}")


def _print_suite(result: dict[str, Any]) -> None:
    if "error" in result:
        print(f"\nsuite: {result['error']}: " + " / ".join(result["output_tail"]))
        return
    print(
        f"\nsuite: {result['command']} (JAX compilation cache: {result['compilation_cache']}): "
        f"{result['tests']} tests, {result['cases']} distinct cases run in "
        f"{result['wall_seconds']:.1f} s = {result['cases_per_second']:.1f} cases/s (judging "
        f"{result['checks']} checks); {result['outcomes']}; "
        f"coverage {result['coverage']}; exit {result['exit_code']}"
        + (
            ""
            if result.get("programs_compiled") is None
            else f"; {result['programs_compiled']} programs compiled"
        )
    )


def _print_suite_targets(entries: list[dict[str, Any]]) -> None:
    if entries:
        print("\nsuite targets:")
    for entry in entries:
        print(f"  {_verdict(entry)} {entry['case']}: {entry['target']}: {entry['measured']}")
        _print_evidence(entry["evidence"])
