"""The pooling family (AVERAGE_POOLING(1), MAX_POOLING(1, 2), LP_POOLING(1), MAX_UNPOOLING, both
gradients and QUANTIZED_LINEAR_AVERAGE_POOLING): the pages' definitions worked by hand on
dmlspec's kernels and the NumPy reference (padding, IncludePadding, dilations, MAX_POOLING2's
indices and their tie rule, LP's norm, unpooling max pooling's indices, the quantized average's
rounding and saturation); the size rules and the undefined-result rules firing by id; the window
expression functions against brute force; the generated suites pass on the kernels, the
reference and onnxruntime, and broken backends are caught (IncludePadding ignored, the padding
on the wrong side, the last of tied maxima's index, LP without the absolute value, an unpooled
output not zeroed, a quantized result wrapped instead of saturated)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.expr.functions import FUNCTIONS
from dmlspec.validation import check_requires, validate_operator

from .sweeps import fails_drawn_cases
from .test_conformance import conformance

POOLINGS = (
    "AVERAGE_POOLING",
    "AVERAGE_POOLING1",
    "MAX_POOLING",
    "MAX_POOLING1",
    "MAX_POOLING2",
    "LP_POOLING",
    "LP_POOLING1",
    "MAX_UNPOOLING",
    "AVERAGE_POOLING_GRAD",
    "MAX_POOLING_GRAD",
    "QUANTIZED_LINEAR_AVERAGE_POOLING",
)
WINDOWED = tuple(name for name in POOLINGS if name != "MAX_UNPOOLING")


def _pool(
    name: str,
    data_type: str,
    input_sizes: list[int],
    output_sizes: list[int],
    indices: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": data_type, "Sizes": input_sizes},
        "OutputTensor": {"DataType": data_type, "Sizes": output_sizes},
        "DimensionCount": len(input_sizes) - 2,
        **fields,
    }
    if indices is not None:
        desc["OutputIndicesTensor"] = {"DataType": indices, "Sizes": output_sizes}
    return {"type": f"DML_OPERATOR_{name}", "desc": desc}


def _both(operator: dict[str, Any], x: np.ndarray) -> list[dict[str, np.ndarray]]:
    """The reference's and the kernel's outputs."""
    return [reference.run(operator, {"InputTensor": x}), ops.run(operator, {"InputTensor": x})]


X = np.array([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]]], np.float32)
# Window 2x2, stride 2, one padding row and column before: windows over the padded rows
# {-1, 0}, {1, 2} and columns {-1, 0}, {1, 2} (the last column, 3, in none).
WINDOW: dict[str, Any] = {
    "WindowSize": [2, 2],
    "Strides": [2, 2],
    "StartPadding": [1, 1],
    "EndPadding": [0, 0],
}


def test_average_pooling_by_hand() -> None:
    operator = _pool("AVERAGE_POOLING", "FLOAT32", [1, 1, 3, 4], [1, 1, 2, 2], **WINDOW)
    # IncludePadding FALSE: divided by the input elements in the window.
    operator["desc"]["IncludePadding"] = False
    excluded = np.array([[[[1, (2 + 3) / 2], [(5 + 9) / 2, (6 + 7 + 10 + 11) / 4]]]], np.float32)
    for result in _both(operator, X):
        np.testing.assert_array_equal(result["OutputTensor"], excluded)
    # TRUE: by the window's 4 elements, the padding's zeros counted.
    operator["desc"]["IncludePadding"] = True
    included = np.array([[[[1 / 4, 5 / 4], [14 / 4, 34 / 4]]]], np.float32)
    for result in _both(operator, X):
        np.testing.assert_array_equal(result["OutputTensor"], included)
    value, bound, largest = reference.run_exact(operator, {"InputTensor": -X})["OutputTensor"]
    np.testing.assert_array_equal(value, -included)
    np.testing.assert_array_equal(bound, included)  # the average of |x|
    np.testing.assert_array_equal(largest, included * 4)  # the sum before the division


def test_average_pooling1_dilated_by_hand() -> None:
    # One row of 5, window 2 dilated by 3 (reaching 4 elements), stride 1: {0, 3}, {1, 4}.
    operator = _pool(
        "AVERAGE_POOLING1",
        "FLOAT32",
        [1, 1, 1, 5],
        [1, 1, 1, 2],
        WindowSize=[1, 2],
        Strides=[1, 1],
        StartPadding=[0, 0],
        EndPadding=[0, 0],
        Dilations=[1, 3],
        IncludePadding=True,
    )
    x = np.array([[[[1, 2, 4, 8, 16]]]], np.float32)
    for result in _both(operator, x):
        np.testing.assert_array_equal(result["OutputTensor"], [[[[(1 + 8) / 2, (2 + 16) / 2]]]])


def test_max_pooling_by_hand_with_the_first_of_tied_indices() -> None:
    operator = _pool("MAX_POOLING2", "FLOAT32", [1, 1, 3, 4], [1, 1, 2, 2], "UINT32", **WINDOW)
    operator["desc"]["Dilations"] = [1, 1]
    # The padding takes no part: all-negative windows keep their own maximum. Ties: the
    # window {1, 2} x {1, 2} holds -6, -6, -10, -6: the first (row-major), index 5.
    x = -np.array([[[[1, 2, 2, 4], [5, 6, 6, 8], [9, 10, 6, 12]]]], np.float32)
    for result in _both(operator, x):
        np.testing.assert_array_equal(result["OutputTensor"], [[[[-1, -2], [-5, -6]]]])
        np.testing.assert_array_equal(result["OutputIndicesTensor"], [[[[0, 1], [4, 5]]]])
    # Indices count the whole input as one array: batch and channel included.
    batched = _pool("MAX_POOLING1", "INT8", [2, 1, 1, 2], [2, 1, 1, 1], "UINT64")
    batched["desc"].update(
        WindowSize=[1, 2], Strides=[1, 1], StartPadding=[0, 0], EndPadding=[0, 0]
    )
    y = np.array([[[[3, 7]]], [[[7, 7]]]], np.int8)
    for result in _both(batched, y):
        np.testing.assert_array_equal(result["OutputTensor"], [[[[7]]], [[[7]]]])
        np.testing.assert_array_equal(result["OutputIndicesTensor"], [[[[1]]], [[[2]]]])
    # Without OutputIndicesTensor, MAX_POOLING1 gives the values alone.
    del batched["desc"]["OutputIndicesTensor"]
    for result in _both(batched, y):
        assert set(result) == {"OutputTensor"}


def test_lp_pooling_is_the_norm_of_the_window() -> None:
    operator = _pool("LP_POOLING", "FLOAT32", [1, 1, 1, 4], [1, 1, 1, 2], P=1)
    operator["desc"].update(
        WindowSize=[1, 2], Strides=[1, 2], StartPadding=[0, 0], EndPadding=[0, 0]
    )
    x = np.array([[[[3, -4, -1, 0]]]], np.float32)
    for p, expected in ((1, [7, 1]), (2, [5, 1]), (3, [(27 + 64) ** (1 / 3), 1])):
        operator["desc"]["P"] = p
        for result in _both(operator, x):
            np.testing.assert_allclose(result["OutputTensor"], [[[expected]]], rtol=1e-6)
    value, bound, largest = reference.run_exact(operator, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_array_equal(value, bound)  # every term |x|^P is non-negative
    np.testing.assert_array_equal(largest, [[[[27 + 64, 1]]]])  # the sum before the root


LONGER = {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 2]}
# One change each (C3, DimensionCount, also changes the arrays' counts: the catalog's tests).
CHANGES: dict[str, dict[str, Any]] = {
    "C4": {"Strides": [0, 2]},
    "C5": {"WindowSize": [2, 0]},
    "C6": {"Dilations": [1, 0]},
    "C7": {"WindowSize": [5, 2]},  # the padded height is 4
    "C8": {"OutputTensor": LONGER, "OutputIndicesTensor": {**LONGER, "DataType": "UINT32"}},
    "C9": {"OutputIndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 2, 3]}},
}


@pytest.mark.parametrize("rule", sorted(CHANGES))
def test_size_rules_fire_by_id(rule: str) -> None:
    operator = _pool("MAX_POOLING2", "FLOAT32", [1, 1, 3, 4], [1, 1, 2, 2], "UINT32", **WINDOW)
    operator["desc"]["Dilations"] = [1, 1]
    assert validate_operator(operator).valid
    operator["desc"].update(CHANGES[rule])
    assert validate_operator(operator).fired() == (f"MAX_POOLING2.{rule}",)


def test_the_dilated_window_sets_the_output_sizes() -> None:
    # Errata: the page's formula leaves Dilations out; a window of 2 dilated by 2 spans 3.
    operator = _pool(
        "LP_POOLING1",
        "FLOAT32",
        [1, 1, 4, 4],
        [1, 1, 2, 2],
        WindowSize=[2, 2],
        Strides=[1, 1],
        StartPadding=[0, 0],
        EndPadding=[0, 0],
        Dilations=[2, 2],
        P=2,
    )
    assert validate_operator(operator).valid
    operator["desc"]["OutputTensor"]["Sizes"] = [1, 1, 3, 3]  # the page's formula
    assert validate_operator(operator).fired() == ("LP_POOLING1.C8",)
    operator["desc"]["Dilations"] = [3, 3]  # spans 4: one window; 5 would not fit
    operator["desc"]["OutputTensor"]["Sizes"] = [1, 1, 1, 1]
    assert validate_operator(operator).valid
    operator["desc"]["Dilations"] = [4, 4]
    assert "LP_POOLING1.C7" in validate_operator(operator).fired()


def _windows_brute(
    sizes: list[int], window: list[int], strides: list[int], dilations: list[int], start: list[int]
) -> tuple[list[int], dict[tuple[int, ...], list[tuple[int, ...]]]]:
    counts = [
        (n + b + e - ((w - 1) * d + 1)) // s + 1
        for n, w, s, d, b, e in zip(sizes, window, strides, dilations, start, start, strict=True)
    ]
    held = {}
    for o in itertools.product(*(range(c) for c in counts)):
        positions = [
            [o[i] * strides[i] + k * dilations[i] - start[i] for k in range(window[i])]
            for i in range(len(sizes))
        ]
        held[o] = [
            p
            for p in itertools.product(*positions)
            if all(0 <= p[i] < sizes[i] for i in range(len(p)))
        ]
    return counts, held


def test_window_functions_match_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(300):
        rank = rng.randint(1, 2)
        sizes = [rng.randint(1, 5) for _ in range(rank)]
        window = [rng.randint(1, 3) for _ in range(rank)]
        strides = [rng.randint(1, 3) for _ in range(rank)]
        dilations = [rng.randint(1, 3) for _ in range(rank)]
        start = [rng.randint(0, 4) for _ in range(rank)]  # the same padding at the end
        counts, held = _windows_brute(sizes, window, strides, dilations, start)
        if min(counts) < 1:
            continue
        ok = np.array([rng.random() < 0.8 for _ in range(2 * int(np.prod(sizes)))])
        ok = ok.reshape([1, 2, *sizes])
        holding = FUNCTIONS["windows_holding_input"].impl(
            None, sizes, window, strides, dilations, start, start
        )
        every = FUNCTIONS["windows_all"].impl(None, ok, window, strides, dilations, start, start)
        for o, positions in held.items():
            assert holding[o] == bool(positions)
            for c in range(2):
                assert every[(0, c, *o)] == all(ok[(0, c, *p)] for p in positions)


def test_undefined_cells_are_the_empty_and_nan_windows() -> None:
    # Width 2, window 1, stride 1, padding 1 each side: windows -1, 0, 1, 2; the first and
    # last lie wholly in the padding.
    operator = _pool(
        "MAX_POOLING1",
        "FLOAT32",
        [1, 1, 1, 2],
        [1, 1, 1, 4],
        "UINT32",
        WindowSize=[1, 1],
        Strides=[1, 1],
        StartPadding=[0, 1],
        EndPadding=[0, 1],
    )
    x = np.array([[[[np.nan, 1.0]]]], np.float32)
    report = check_requires(operator, {"InputTensor": x})
    assert {v.constraint for v in report.violations} == {"MAX_POOLING1.R1", "MAX_POOLING1.R2"}
    expected = np.array([[[[True, True, False, True]]]])
    np.testing.assert_array_equal(report.undefined["OutputTensor"], expected)
    np.testing.assert_array_equal(report.undefined["OutputIndicesTensor"], expected)
    average = _pool(
        "AVERAGE_POOLING",
        "FLOAT32",
        [1, 1, 1, 2],
        [1, 1, 1, 4],
        WindowSize=[1, 1],
        Strides=[1, 1],
        StartPadding=[0, 1],
        EndPadding=[0, 1],
        IncludePadding=False,
    )
    report = check_requires(average, {"InputTensor": x})
    np.testing.assert_array_equal(
        report.undefined["OutputTensor"], [[[[True, False, False, True]]]]
    )
    average["desc"]["IncludePadding"] = True  # zeros averaged: 0, defined
    assert check_requires(average, {"InputTensor": x}).satisfied


def test_average_pooling_grad_spreads_each_window_s_share() -> None:
    # The page's description: a 2x2 window, no padding, stride 1 (not an example block the
    # pages' parser reads, so checked here).
    example: dict[str, Any] = {
        "type": "DML_OPERATOR_AVERAGE_POOLING_GRAD",
        "desc": {
            "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "OutputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
            "DimensionCount": 2,
            "Strides": [1, 1],
            "WindowSize": [2, 2],
            "StartPadding": [0, 0],
            "EndPadding": [0, 0],
            "IncludePadding": False,
        },
    }
    page = [[[[0.25, 0.75, 0.5], [1, 2.5, 1.5], [0.75, 1.75, 1]]]]
    for run in (reference.run, ops.run):
        given = {"InputGradientTensor": np.array([[[[1, 2], [3, 4]]]], np.float32)}
        np.testing.assert_array_equal(run(example, given)["OutputGradientTensor"], page)
    # Padded, by hand: rows of 3, window 2, stride 1, one padding column each side,
    # IncludePadding FALSE: windows {-1, 0}, {0, 1}, {1, 2}, {2, 3} hold 1, 2, 2, 1 elements.
    operator: dict[str, Any] = {
        "type": "DML_OPERATOR_AVERAGE_POOLING_GRAD",
        "desc": {
            "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
            "OutputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 3]},
            "DimensionCount": 2,
            "Strides": [1, 1],
            "WindowSize": [1, 2],
            "StartPadding": [0, 1],
            "EndPadding": [0, 1],
            "IncludePadding": False,
        },
    }
    g = {"InputGradientTensor": np.array([[[[4, 8, 2, 6]]]], np.float32)}
    excluded = [[[[4 + 8 / 2, 8 / 2 + 2 / 2, 2 / 2 + 6]]]]
    operator["desc"]["IncludePadding"] = True  # every window divided by 2
    included = [[[[(4 + 8) / 2, (8 + 2) / 2, (2 + 6) / 2]]]]
    for expected, flag in ((included, True), (excluded, False)):
        operator["desc"]["IncludePadding"] = flag
        for run in (reference.run, ops.run):
            np.testing.assert_array_equal(run(operator, g)["OutputGradientTensor"], expected)
    value, bound, _ = reference.run_exact(
        operator, {"InputGradientTensor": -g["InputGradientTensor"]}
    )["OutputGradientTensor"]
    np.testing.assert_array_equal(value, -np.array(excluded))
    np.testing.assert_array_equal(bound, excluded)


def test_max_pooling_grad_follows_the_page_s_example() -> None:
    operator: dict[str, Any] = {
        "type": "DML_OPERATOR_MAX_POOLING_GRAD",
        "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
            "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "OutputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
            "DimensionCount": 2,
            "Strides": [1, 1],
            "WindowSize": [2, 2],
            "StartPadding": [0, 0],
            "EndPadding": [0, 0],
            "Dilations": [1, 1],
        },
    }
    x = np.array([[[[1, 2, 3], [2, 4, 2], [5, 6, 7]]]], np.float32)
    inputs = {"InputTensor": x, "InputGradientTensor": np.array([[[[1, 2], [4, 5]]]], np.float32)}
    page = [[[[0, 0, 0], [0, 3, 0], [0, 4, 5]]]]  # both top windows pick the 4: 1 + 2
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(run(operator, inputs)["OutputGradientTensor"], page)
    # Ties: the lowest logical index. All equal: each window's first element.
    tied = {**inputs, "InputTensor": np.ones_like(x)}
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(
            run(operator, tied)["OutputGradientTensor"], [[[[1, 2, 0], [4, 5, 0], [0, 0, 0]]]]
        )
    # A NaN: every element a window holding it holds is undefined (R1).
    x[0, 0, 0, 0] = np.nan
    report = check_requires(operator, {**inputs, "InputTensor": x})
    expected = np.zeros((1, 1, 3, 3), bool)
    expected[0, 0, :2, :2] = True
    np.testing.assert_array_equal(report.undefined["OutputGradientTensor"], expected)


def _unpooling(output_sizes: list[int], data_type: str = "FLOAT32") -> dict[str, Any]:
    return {
        "type": "DML_OPERATOR_MAX_UNPOOLING",
        "desc": {
            "InputTensor": {"DataType": data_type, "Sizes": [1, 1, 2, 2]},
            "IndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 2, 2]},
            "OutputTensor": {"DataType": data_type, "Sizes": output_sizes},
        },
    }


def test_max_unpooling_scatters_max_pooling_s_indices() -> None:
    # MAX_POOLING2's values and indices of a 4x4 input, window 2, stride 2, unpooled: each
    # maximum back at its place, zeros elsewhere.
    x = np.array([[[[1, 5, 2, 0], [3, 4, 8, 6], [0, 0, 1, 1], [9, 0, 1, 7]]]], np.float32)
    pool = _pool("MAX_POOLING2", "FLOAT32", [1, 1, 4, 4], [1, 1, 2, 2], "UINT32")
    pool["desc"].update(WindowSize=[2, 2], Strides=[2, 2], StartPadding=[0, 0])
    pool["desc"].update(EndPadding=[0, 0], Dilations=[1, 1])
    pooled = reference.run(pool, {"InputTensor": x})
    np.testing.assert_array_equal(pooled["OutputIndicesTensor"], [[[[1, 6], [12, 15]]]])
    inputs = {"InputTensor": pooled["OutputTensor"], "IndicesTensor": pooled["OutputIndicesTensor"]}
    expected = np.where(np.isin(np.arange(16), [1, 6, 12, 15]), x.reshape(-1), 0).reshape(x.shape)
    for run in (reference.run, ops.run):
        np.testing.assert_array_equal(
            run(_unpooling([1, 1, 4, 4]), inputs)["OutputTensor"], expected
        )


def test_max_unpooling_rules() -> None:
    operator = _unpooling([1, 1, 4, 4], "INT8")
    assert validate_operator(operator).valid
    broken = _unpooling([1, 1, 4, 4], "INT8")
    broken["desc"]["IndicesTensor"]["Sizes"] = [1, 1, 2, 1]
    assert validate_operator(broken).fired() == ("MAX_UNPOOLING.C2",)
    x = np.array([[[[1, 2], [3, 4]]]], np.int8)
    # An index past the 16 elements: the whole output undefined (R1).
    report = check_requires(
        operator, {"InputTensor": x, "IndicesTensor": np.array([[[[0, 1], [2, 16]]]], np.uint32)}
    )
    assert [v.constraint for v in report.violations] == ["MAX_UNPOOLING.R1"]
    assert report.undefined["OutputTensor"].all()
    # Two indices at cell 5: that cell takes either value (R2), the rest is defined.
    colliding = {"InputTensor": x, "IndicesTensor": np.array([[[[5, 0], [5, 9]]]], np.uint32)}
    report = check_requires(operator, colliding)
    assert [v.constraint for v in report.violations] == ["MAX_UNPOOLING.R2"]
    assert np.flatnonzero(report.undefined["OutputTensor"]).tolist() == [5]
    assert report.allowed["OutputTensor"] == "one_of_colliding_updates"
    _, writes = reference.run_recording(operator, colliding)
    assert writes["OutputTensor"] == {(5,): [1, 3]}


BROKEN = {
    "tests.pooling_backends:IgnoredIncludePadding": (
        "AVERAGE_POOLING",
        "AVERAGE_POOLING1",
        "AVERAGE_POOLING_GRAD",
    ),
    "tests.pooling_backends:SwappedPaddingPool": WINDOWED,
    "tests.pooling_backends:LastTieIndex": ("MAX_POOLING1", "MAX_POOLING2"),
    "tests.pooling_backends:SignedLpPower": ("LP_POOLING", "LP_POOLING1"),
    "tests.pooling_backends:UnzeroedUnpool": ("MAX_UNPOOLING",),
    "tests.pooling_backends:WrappedQuantizedPool": ("QUANTIZED_LINEAR_AVERAGE_POOLING",),
}


@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_a_broken_backend_fails_drawn_cases(backend: str) -> None:
    # Quick: a few drawn cases per operator through the suites' own check, the first failure
    # enough; the whole suites run in the slow set below.
    fails_drawn_cases(backend, BROKEN[backend])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_pooling_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(backend, tmp_path, "--ops", *POOLINGS, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    # onnxruntime's MaxPool has no 64-bit integer kernel: those 12 cells are declined.
    hit = "268/280" if backend == "onnxruntime" else "280/280"
    assert f"support cells hit {hit}" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_the_suites_catch_a_broken_backend(backend: str, tmp_path: Path) -> None:
    run = conformance(backend, tmp_path, "--ops", *BROKEN[backend], "--workers", "0")
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {t["operator"] for t in results["tests"] if t["outcome"] == "failed"}
    assert failed == set(BROKEN[backend])


def _quantized_pool(**fields: Any) -> dict[str, Any]:
    """QUANTIZED_LINEAR_AVERAGE_POOLING of a UINT8 {1, 2, 3, 3} input into INT8 {1, 2, 2, 2}:
    window 2x2, stride 2, one padding row and column before; InputScale per channel, the
    other quantization tensors per tensor (OutputZeroPoint per channel)."""
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "UINT8", "Sizes": [1, 2, 3, 3]},
        "InputScaleTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 1, 1]},
        "InputZeroPointTensor": {"DataType": "UINT8", "Sizes": [1, 1, 1, 1]},
        "OutputScaleTensor": {"DataType": "FLOAT32", "Sizes": [1]},
        "OutputZeroPointTensor": {"DataType": "INT8", "Sizes": [2, 1, 1]},
        "OutputTensor": {"DataType": "INT8", "Sizes": [1, 2, 2, 2]},
        "DimensionCount": 2,
        "Dilations": [1, 1],
        "IncludePadding": False,
        **WINDOW,
        **fields,
    }
    return {"type": "DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING", "desc": desc}


def _quantized_inputs(x: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "InputTensor": x,
        "InputScaleTensor": np.array([0.5, 2.0], np.float32).reshape(1, 2, 1, 1),
        "InputZeroPointTensor": np.array(10, np.uint8).reshape(1, 1, 1, 1),
        "OutputScaleTensor": np.array([1.0], np.float32),
        "OutputZeroPointTensor": np.array([0, -100], np.int8).reshape(2, 1, 1),
    }


Q = (np.arange(18, dtype=np.uint8) * 10).reshape(1, 2, 3, 3)


def test_quantized_average_pooling_by_hand() -> None:
    # Channel 0 dequantized ((x - 10) * 0.5): [[-5, 0, 5], [10, 15, 20], [25, 30, 35]]; the
    # windows hold {-5}, {0, 5}, {10, 25}, {15, 20, 30, 35}: averages -5, 2.5, 17.5, 25, rounded
    # halves to even. Channel 1 ((x - 10) * 2): 160 .. 320; + OutputZeroPoint -100, saturated.
    operator = _quantized_pool()
    inputs = _quantized_inputs(Q)
    expected = np.array([[[[-5, 2], [18, 25]], [[60, 90], [127, 127]]]], np.int8)
    for result in (reference.run(operator, inputs), ops.run(operator, inputs)):
        assert result["OutputTensor"].dtype == np.int8
        np.testing.assert_array_equal(result["OutputTensor"], expected)
    # IncludePadding TRUE: the padding's zeros (the zero point) count; divisors 4.
    operator["desc"]["IncludePadding"] = True
    expected = np.array([[[[-1, 1], [9, 25]], [[-60, -5], [25, 127]]]], np.int8)
    for result in (reference.run(operator, inputs), ops.run(operator, inputs)):
        np.testing.assert_array_equal(result["OutputTensor"], expected)


def test_quantized_average_pooling_size_rules() -> None:
    operator: dict[str, Any] = {
        "type": "DML_OPERATOR_QUANTIZED_LINEAR_AVERAGE_POOLING",
        "desc": {
            "InputTensor": {"DataType": "INT8", "Sizes": [1, 2, 4, 4]},
            "InputScaleTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1]},
            "OutputScaleTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 1, 1]},
            "OutputTensor": {"DataType": "UINT8", "Sizes": [1, 2, 2, 2]},
            "DimensionCount": 2,
            "Strides": [2, 2],
            "WindowSize": [2, 2],
            "StartPadding": [0, 0],
            "EndPadding": [0, 0],
            "Dilations": [1, 1],
            "IncludePadding": True,
        },
    }
    assert validate_operator(operator).valid
    operator["desc"]["OutputTensor"]["Sizes"] = [1, 2, 3, 2]
    assert validate_operator(operator).fired() == ("QUANTIZED_LINEAR_AVERAGE_POOLING.C13",)
    operator["desc"]["Dilations"] = [3, 1]  # the dilated window spans 4 rows: one window
    operator["desc"]["OutputTensor"]["Sizes"] = [1, 2, 1, 2]
    assert validate_operator(operator).valid


# One change of the by-hand case's data each, and the rule it breaks (R5: IncludePadding FALSE
# with a window wholly in the padding, by a desc change).
SCALE_RULES: dict[str, tuple[str, float]] = {
    "R1": ("InputScaleTensor", 0.0),
    "R2": ("OutputScaleTensor", 0.0),
    "R3": ("InputScaleTensor", np.inf),
    "R4": ("OutputScaleTensor", np.nan),
    "R6": ("InputScaleTensor", 2.0**127 / 255 / 4),  # just past 2^127 // (255 * 4)
}


@pytest.mark.parametrize("rule", sorted(SCALE_RULES))
def test_quantized_average_pooling_undefined_results(rule: str) -> None:
    operator = _quantized_pool()
    inputs = _quantized_inputs(Q)
    assert check_requires(operator, inputs).satisfied
    field, value = SCALE_RULES[rule]
    inputs[field] = np.full_like(inputs[field], value)
    report = check_requires(operator, inputs)
    assert {v.constraint for v in report.violations} >= {f"QUANTIZED_LINEAR_AVERAGE_POOLING.{rule}"}
    assert report.undefined["OutputTensor"].all()


def test_quantized_average_pooling_empty_windows_are_undefined() -> None:
    # Two padding rows before a 3-row input, window 2, stride 2: the first row of windows lies
    # wholly in the padding.
    operator = _quantized_pool(StartPadding=[2, 1])
    operator["desc"]["OutputTensor"]["Sizes"] = [1, 2, 2, 2]
    assert validate_operator(operator).valid
    report = check_requires(operator, _quantized_inputs(Q))
    assert [v.constraint for v in report.violations] == ["QUANTIZED_LINEAR_AVERAGE_POOLING.R5"]
    np.testing.assert_array_equal(
        report.undefined["OutputTensor"][0, 0], [[True, True], [False, False]]
    )
    operator["desc"]["IncludePadding"] = True  # zeros averaged: OutputZeroPoint, defined
    assert check_requires(operator, _quantized_inputs(Q)).satisfied


def test_quantized_average_pooling_on_onnxruntime() -> None:
    # QLinearAveragePool (per-tensor, one type) adds the zero point before it rounds, so ties
    # may differ by 1 (the rule's allowance); the per-channel case runs DequantizeLinear,
    # AveragePool and QuantizeLinear. An InputScale / OutputScale beyond FLOAT32 (where
    # QLinearAveragePool gave 0) runs the latter too and saturates.
    pytest.importorskip("onnxruntime")
    backend = load_backend("onnxruntime")
    operator = _quantized_pool()
    inputs = _quantized_inputs(Q)
    want = reference.run(operator, inputs)["OutputTensor"]
    np.testing.assert_array_equal(backend.run(operator, inputs)["OutputTensor"], want)
    desc = operator["desc"]
    desc["InputScaleTensor"]["Sizes"] = [1, 1, 1, 1]
    desc["OutputZeroPointTensor"] = {"DataType": "UINT8", "Sizes": [1]}
    desc["InputTensor"]["Sizes"] = [1, 1, 3, 3]
    desc["OutputTensor"] = {"DataType": "UINT8", "Sizes": [1, 1, 2, 2]}
    inputs.update(
        InputTensor=Q[:, :1],
        InputScaleTensor=np.array(0.5, np.float32).reshape(1, 1, 1, 1),
        OutputZeroPointTensor=np.array([3], np.uint8),
    )
    got = backend.run(operator, inputs)["OutputTensor"].astype(int)
    want = reference.run(operator, inputs)["OutputTensor"].astype(int)
    np.testing.assert_array_equal(want, [[[[0, 2 + 3], [18 + 3, 25 + 3]]]])  # -5 + 3 saturated
    assert np.abs(got - want).max() <= 1
    inputs["InputScaleTensor"] = np.array(1e30, np.float32).reshape(1, 1, 1, 1)
    inputs["OutputScaleTensor"] = np.array([1e-30], np.float32)
    got = backend.run(operator, inputs)["OutputTensor"]
    np.testing.assert_array_equal(got, reference.run(operator, inputs)["OutputTensor"])
    np.testing.assert_array_equal(got, [[[[0, 255], [255, 255]]]])
