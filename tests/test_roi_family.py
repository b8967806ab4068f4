"""The ROI family (ROI_ALIGN, ROI_ALIGN1, ROI_ALIGN_GRAD, ROI_POOLING): hand-worked results of
the pages' definitions and examples on the kernels and the NumPy reference; the size rules and
the requires rules firing by id; the generated suites passing on dmlspec's kernels and the
reference; broken backends (half-pixel offsets forgotten, spatial scale ignored, a gradient not
divided by its sample count) caught."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import Unsupported, ops, reference
from dmlspec.accuracy import check_dot_product
from dmlspec.validation import check_requires, validate_operator

from .roi_backends import UndividedRoiAlignGrad
from .test_conformance import conformance


def _tensor(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def _align1(**fields: Any) -> dict[str, Any]:
    """ROI_ALIGN_GRAD's page example as a forward ROI_ALIGN1: four 2x2 crops of a {1, 1, 4, 4}
    input resized to 1x3, nearest neighbour, pixel centres at half pixels."""
    desc = {
        "InputTensor": _tensor("FLOAT32", [1, 1, 4, 4]),
        "ROITensor": _tensor("FLOAT32", [4, 4]),
        "BatchIndicesTensor": _tensor("UINT32", [4]),
        "OutputTensor": _tensor("FLOAT32", [4, 1, 1, 3]),
        "ReductionFunction": "DML_REDUCE_FUNCTION_AVERAGE",
        "InterpolationMode": "DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR",
        "SpatialScaleX": 1.0,
        "SpatialScaleY": 1.0,
        "InputPixelOffset": 0.5,
        "OutputPixelOffset": -0.5,
        "OutOfBoundsInputValue": 0.0,
        "MinimumSamplesPerOutput": 1,
        "MaximumSamplesPerOutput": 1,
        "AlignRegionsToCorners": False,
    }
    desc.update(fields)
    return {"type": "DML_OPERATOR_ROI_ALIGN1", "desc": desc}


INPUTS = {
    "InputTensor": np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4),
    "ROITensor": np.array([[0, 0, 2, 2], [2, 0, 4, 2], [0, 2, 2, 4], [2, 2, 4, 4]], np.float32),
    "BatchIndicesTensor": np.zeros(4, np.uint32),
}


def _both(operator: dict[str, Any], inputs: dict[str, Any]) -> list[np.ndarray]:
    """The output of the reference and of the kernel."""
    return [
        np.asarray(reference.run(operator, inputs)["OutputTensor"]),
        np.asarray(ops.run(operator, inputs)["OutputTensor"]),
    ]


def test_roi_align1_matches_the_grad_pages_nearest_neighbour_example() -> None:
    # "[[[[ 1,  1,  2]]], [[[ 3,  3,  4]]], [[[ 9,  9, 10]]], [[[11, 11, 12]]]]": the samples
    # of [0, 0, 2, 2] sit at x = -1/6, 1/2 (a tie: the lower column) and 7/6, y = 1/2 (row 0).
    expected = np.array([1, 1, 2, 3, 3, 4, 9, 9, 10, 11, 11, 12], np.float32).reshape(4, 1, 1, 3)
    for got in _both(_align1(), INPUTS):
        np.testing.assert_array_equal(got, expected)


def test_roi_align1_bilinear_average_by_hand() -> None:
    # One ROI [0.5, 0.5, 2.5, 1.5] resized to 1x1 with 2x1 samples (x: 2 / 1 -> 2; y: 1 / 1
    # -> 1): x = (s + 0.5) * 1 + 0.5 - 0.5 = 0.5, 1.5 and y = 0.5 * 1 + 0.5 - 0.5 = 0.5.
    # Bilinear at (0.5, 0.5): (1 + 2 + 5 + 6) / 4 = 3.5; at (0.5, 1.5): (2 + 3 + 6 + 7) / 4 =
    # 4.5; their average 4.
    operator = _align1(
        InterpolationMode="DML_INTERPOLATION_MODE_LINEAR",
        ROITensor=_tensor("FLOAT32", [1, 4]),
        BatchIndicesTensor=_tensor("UINT32", [1]),
        OutputTensor=_tensor("FLOAT32", [1, 1, 1, 1]),
        MaximumSamplesPerOutput=4,
    )
    inputs = {
        **INPUTS,
        "ROITensor": np.array([[0.5, 0.5, 2.5, 1.5]], np.float32),
        "BatchIndicesTensor": np.zeros(1, np.uint32),
    }
    for got in _both(operator, inputs):
        np.testing.assert_allclose(got.reshape(-1), [4.0], rtol=1e-6)
    maximum = copy.deepcopy(operator)
    maximum["desc"]["ReductionFunction"] = "DML_REDUCE_FUNCTION_MAX"
    for got in _both(maximum, inputs):
        np.testing.assert_allclose(got.reshape(-1), [4.5], rtol=1e-6)
    value, bound, _ = reference.run_exact(operator, inputs)["OutputTensor"]
    assert value.reshape(-1).tolist() == [4.0] and (bound > 4.0).all()


def test_roi_align_is_roi_align1_with_half_pixel_offsets_and_reads_outside_values() -> None:
    # ROI_ALIGN: InputPixelOffset 0.5, OutputPixelOffset -0.5. The ROI [2, -2, 4, 0] scaled by
    # 2 in x and 1 in y reaches columns 4..8 and rows -2..0: its samples at x = 4.5 .. 7.5 and
    # y = -1.5 .. -0.5 lie outside the input and read OutOfBoundsInputValue (-7).
    operator = _align1(
        SpatialScaleX=2.0,
        ROITensor=_tensor("FLOAT32", [1, 4]),
        BatchIndicesTensor=_tensor("UINT32", [1]),
        OutputTensor=_tensor("FLOAT32", [1, 1, 2, 2]),
        OutOfBoundsInputValue=-7.0,
        InterpolationMode="DML_INTERPOLATION_MODE_LINEAR",
    )
    aligned: dict[str, Any] = {"type": "DML_OPERATOR_ROI_ALIGN", "desc": dict(operator["desc"])}
    for name in ("InputPixelOffset", "OutputPixelOffset", "AlignRegionsToCorners"):
        del aligned["desc"][name]
    inputs = {
        **INPUTS,
        "ROITensor": np.array([[2, -2, 4, 0]], np.float32),
        "BatchIndicesTensor": np.zeros(1, np.uint32),
    }
    assert validate_operator(aligned).valid
    for got in _both(aligned, inputs) + _both(operator, inputs):
        np.testing.assert_array_equal(got, np.full((1, 1, 2, 2), -7.0, np.float32))
    # Inside the input the two agree too: a crop of the middle, bilinear.
    inputs["ROITensor"] = np.array([[0.25, 1.0, 1.5, 3.0]], np.float32)
    first, second = _both(aligned, inputs)[0], _both(operator, inputs)[0]
    np.testing.assert_array_equal(first, second)


def test_roi_pooling_follows_the_pages_formulas() -> None:
    # ROI [BatchID 1, 1, 1, 7, 3] of a {2, 1, 5, 5} input (values 25..49 in batch 1), pooled
    # 2x2: x1 = 1, x2 = 7 (RegionWidth 7), y1 = 1, y2 = 3 (RegionHeight 3); bins x [1, 5) and
    # [4, 8) clamped to [4, 5), y [1, 3) and [2, 4). Maxima: rows 1-2 x columns 1-4 -> 39,
    # column 4 -> 39; rows 2-3 -> 44, 44. SpatialScale 0.5 on [0, 0, 0, 3, 5] rounds 1.5 and
    # 2.5 away from zero: x2 = 2, y2 = 3.
    operator: dict[str, Any] = {
        "type": "DML_OPERATOR_ROI_POOLING",
        "desc": {
            "InputTensor": _tensor("FLOAT32", [2, 1, 5, 5]),
            "ROITensor": _tensor("FLOAT32", [1, 1, 2, 5]),
            "OutputTensor": _tensor("FLOAT32", [2, 1, 2, 2]),
            "SpatialScale": 1.0,
            "PooledSize": {"Height": 2, "Width": 2},
        },
    }
    inputs = {
        "InputTensor": np.arange(50, dtype=np.float32).reshape(2, 1, 5, 5),
        "ROITensor": np.array([[[[0, 0, 0, 2, 2], [1, 1, 1, 7, 3]]]], np.float32),
    }
    expected = np.array([[[[6, 7], [11, 12]]], [[[39, 39], [44, 44]]]], np.float32)
    for got in _both(operator, inputs):
        np.testing.assert_array_equal(got, expected)
    operator["desc"]["SpatialScale"] = 0.5
    inputs["ROITensor"] = np.array([[[[0, 0, 0, 3, 5], [0, 20, 20, 30, 30]]]], np.float32)
    # ROI 0: x 0..2, y 0..3 (RegionHeight 4): bins y [0, 2), [2, 4), x [0, 2), [1, 3).
    # ROI 1 starts at (10, 10), outside the input: every bin is empty (0).
    expected = np.array([[[[6, 7], [16, 17]]], [[[0, 0], [0, 0]]]], np.float32)
    for got in _both(operator, inputs):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("rule", "change"),
    [
        ("ROI_ALIGN1.C2", {"ROITensor": [4, 5]}),
        ("ROI_ALIGN1.C3", {"ROITensor": [2, 4, 4]}),
        ("ROI_ALIGN1.C4", {"BatchIndicesTensor": [2, 4]}),
        ("ROI_ALIGN1.C5", {"BatchIndicesTensor": [3]}),
        ("ROI_ALIGN1.C6", {"OutputTensor": [3, 1, 1, 3]}),
        ("ROI_ALIGN1.C7", {"OutputTensor": [4, 2, 1, 3]}),
        ("ROI_ALIGN1.C8", {"ReductionFunction": "DML_REDUCE_FUNCTION_SUM"}),
        ("ROI_ALIGN1.C9", {"MinimumSamplesPerOutput": 0}),
        ("ROI_ALIGN1.C10", {"MinimumSamplesPerOutput": 2}),
    ],
)
def test_roi_align1_size_rules_fire_alone(rule: str, change: dict[str, Any]) -> None:
    operator = _align1()
    assert validate_operator(operator).valid
    desc = json.loads(json.dumps(operator["desc"]))
    for name, value in change.items():
        if name.endswith("Tensor"):
            desc[name]["Sizes"] = value
        else:
            desc[name] = value
    assert validate_operator({**operator, "desc": desc}).fired() == (rule,)


def test_roi_align_grad_size_rules_fire_alone() -> None:
    # The forward pass of _align1() backwards: gradients {4, 1, 1, 3} into {1, 1, 4, 4}.
    desc = {
        "InputTensor": _tensor("FLOAT32", [1, 1, 4, 4]),
        "InputGradientTensor": _tensor("FLOAT32", [4, 1, 1, 3]),
        "ROITensor": _tensor("FLOAT32", [4, 4]),
        "BatchIndicesTensor": _tensor("UINT32", [4]),
        "OutputGradientTensor": _tensor("FLOAT32", [1, 1, 4, 4]),
        **{
            k: v
            for k, v in _align1()["desc"].items()
            if not k.endswith("Tensor") and k != "OutOfBoundsInputValue"
        },
    }
    operator: dict[str, Any] = {"type": "DML_OPERATOR_ROI_ALIGN_GRAD", "desc": desc}
    assert validate_operator(operator).valid
    for rule, field, sizes in [
        ("ROI_ALIGN_GRAD.C4", "ROITensor", [2, 4, 4]),
        ("ROI_ALIGN_GRAD.C7", "InputGradientTensor", [3, 1, 1, 3]),
        ("ROI_ALIGN_GRAD.C8", "InputGradientTensor", [4, 2, 1, 3]),
        ("ROI_ALIGN_GRAD.C9", "OutputGradientTensor", [1, 1, 4, 5]),
    ]:
        broken = copy.deepcopy(operator)
        broken["desc"][field]["Sizes"] = sizes
        assert validate_operator(broken).fired() == (rule,)
    # The page's presence rules: InputTensor with MAX (or the ROI gradient), an output at least.
    broken = copy.deepcopy(operator)
    del broken["desc"]["InputTensor"]
    assert validate_operator(broken).valid  # AVERAGE, the input gradient only
    broken["desc"]["ReductionFunction"] = "MAX"
    assert validate_operator(broken).fired() == ("ROI_ALIGN_GRAD.C13",)
    broken = copy.deepcopy(operator)
    del broken["desc"]["OutputGradientTensor"]
    assert validate_operator(broken).fired() == ("ROI_ALIGN_GRAD.C14",)


def _grad(**fields: Any) -> dict[str, Any]:
    """ROI_ALIGN_GRAD of _align1()'s forward pass (the page's example): gradients {4, 1, 1, 3}
    back into {1, 1, 4, 4}."""
    desc = {
        "InputTensor": _tensor("FLOAT32", [1, 1, 4, 4]),
        "InputGradientTensor": _tensor("FLOAT32", [4, 1, 1, 3]),
        "ROITensor": _tensor("FLOAT32", [4, 4]),
        "BatchIndicesTensor": _tensor("UINT32", [4]),
        "OutputGradientTensor": _tensor("FLOAT32", [1, 1, 4, 4]),
        **{
            k: v
            for k, v in _align1()["desc"].items()
            if not k.endswith("Tensor") and k != "OutOfBoundsInputValue"
        },
    }
    desc.update(fields)
    return {"type": "DML_OPERATOR_ROI_ALIGN_GRAD", "desc": desc}


GRADIENT = np.arange(1, 13, dtype=np.float32).reshape(4, 1, 1, 3)


def _gradients(operator: dict[str, Any], inputs: dict[str, Any]) -> list[np.ndarray]:
    """OutputGradientTensor from the reference and from the kernel."""
    return [
        np.asarray(reference.run(operator, inputs)["OutputGradientTensor"]),
        np.asarray(ops.run(operator, inputs)["OutputGradientTensor"]),
    ]


def test_roi_align_grad_matches_the_pages_example() -> None:
    # "[[[[ 3, 3, | 9, 6], [ 0, 0, | 0, 0], [15, 9, | 21, 12], [ 0, 0, | 0, 0]]]]": each
    # region's first column read twice, its second once.
    expected = np.array([[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]], np.float32)
    inputs = {**INPUTS, "InputGradientTensor": GRADIENT}
    for reduction in ("AVERAGE", "MAX"):  # one sample per output element: the same
        operator = _grad(ReductionFunction=f"DML_REDUCE_FUNCTION_{reduction}")
        for got in _gradients(operator, inputs):
            np.testing.assert_array_equal(got[0, 0], expected)


def test_roi_align_grad_bilinear_average_and_max_by_hand() -> None:
    # One 3x3 region into one output element, 2 x 2 samples (the count ceil(3 / 1) clamped to
    # 2), each axis at (s + 0.5) * 1.5 - 0.5 = 0.25 and 1.75: weights [0.75, 0.25, 0] and
    # [0, 0.25, 0.75] over the region's three elements.
    operator = _grad(
        InputTensor=_tensor("FLOAT32", [1, 1, 3, 3]),
        InputGradientTensor=_tensor("FLOAT32", [1, 1, 1, 1]),
        ROITensor=_tensor("FLOAT32", [1, 4]),
        BatchIndicesTensor=_tensor("UINT32", [1]),
        OutputGradientTensor=_tensor("FLOAT32", [1, 1, 3, 3]),
        InterpolationMode="DML_INTERPOLATION_MODE_LINEAR",
        MinimumSamplesPerOutput=2,
        MaximumSamplesPerOutput=2,
    )
    inputs = {
        "InputTensor": np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3),
        "InputGradientTensor": np.full((1, 1, 1, 1), 4, np.float32),
        "ROITensor": np.array([[0, 0, 3, 3]], np.float32),
        "BatchIndicesTensor": np.zeros(1, np.uint32),
    }
    low, high = np.array([0.75, 0.25, 0]), np.array([0, 0.25, 0.75])
    # AVERAGE: 4 / 4 samples, each axis's weights summed over its two samples
    for got in _gradients(operator, inputs):
        np.testing.assert_allclose(got[0, 0], np.outer(low + high, low + high), rtol=1e-6)
    # MAX: the whole 4 to the largest sample, the one at (1.75, 1.75) of an increasing input
    operator["desc"]["ReductionFunction"] = "DML_REDUCE_FUNCTION_MAX"
    for got in _gradients(operator, inputs):
        np.testing.assert_allclose(got[0, 0], 4 * np.outer(high, high), rtol=1e-6)
    # A gradient not divided by its 4 samples lies outside the bound the suites judge by.
    operator["desc"]["ReductionFunction"] = "DML_REDUCE_FUNCTION_AVERAGE"
    undivided = UndividedRoiAlignGrad().run(operator, inputs)["OutputGradientTensor"]
    np.testing.assert_allclose(undivided[0, 0], 4 * np.outer(low + high, low + high), rtol=1e-6)
    v, bound, _ = reference.run_exact(operator, inputs)["OutputGradientTensor"]
    assert not check_dot_product(v, bound, undivided, 1, "FLOAT32", statistics=False).passed
    # Without InputTensor (AVERAGE, the input gradient only), the kernel runs all the same.
    del operator["desc"]["InputTensor"]
    without = {k: a for k, a in inputs.items() if k != "InputTensor"}
    for got in _gradients(operator, without):
        np.testing.assert_allclose(got[0, 0], np.outer(low + high, low + high), rtol=1e-6)


def test_roi_align_grad_leaves_the_roi_gradient_and_bad_data_undefined() -> None:
    inputs = {**INPUTS, "InputGradientTensor": GRADIENT}
    assert check_requires(_grad(), inputs).satisfied
    # The page's pseudocode for OutputROIGradientTensor defines nothing dmlspec can check (R6).
    both = _grad(OutputROIGradientTensor=_tensor("FLOAT32", [4, 4]))
    report = check_requires(both, inputs)
    assert [v.constraint for v in report.violations] == ["ROI_ALIGN_GRAD.R6"]
    assert report.undefined["OutputROIGradientTensor"].all()
    assert set(ops.run(both, inputs)) == {"OutputGradientTensor", "OutputROIGradientTensor"}
    alone = copy.deepcopy(both)
    del alone["desc"]["OutputGradientTensor"]
    assert set(reference.run(alone, inputs)) == {"OutputROIGradientTensor"}
    # A NaN under MAX (R3), a non-finite ROI (R2), an infinite LINEAR gradient (R4) and
    # AlignRegionsToCorners (R5) leave the whole input gradient undefined.
    nan_input = {**inputs, "InputTensor": np.full((1, 1, 4, 4), np.nan, np.float32)}
    nan_roi = {**inputs, "ROITensor": np.where(INPUTS["ROITensor"] == 4, np.inf, 0)}
    infinite = {**inputs, "InputGradientTensor": GRADIENT * np.inf}
    for rule, operator, data in [
        ("R3", _grad(ReductionFunction="DML_REDUCE_FUNCTION_MAX"), nan_input),
        ("R2", _grad(), {**nan_roi, "ROITensor": nan_roi["ROITensor"].astype(np.float32)}),
        ("R4", _grad(InterpolationMode="DML_INTERPOLATION_MODE_LINEAR"), infinite),
        ("R5", _grad(AlignRegionsToCorners=True), inputs),
    ]:
        report = check_requires(operator, data)
        assert [v.constraint for v in report.violations] == [f"ROI_ALIGN_GRAD.{rule}"]
        assert report.undefined["OutputGradientTensor"].all()
    assert check_requires(_grad(), nan_input).satisfied  # AVERAGE reads no InputTensor


def test_requires_rules_leave_the_rows_of_bad_rois_undefined() -> None:
    inputs = {
        **INPUTS,
        "ROITensor": INPUTS["ROITensor"].copy(),
        "BatchIndicesTensor": np.array([0, 3, 0, 0], np.uint32),
    }
    inputs["ROITensor"][2, 1] = np.nan
    report = check_requires(_align1(), inputs)
    assert {v.constraint for v in report.violations} == {"ROI_ALIGN1.R1", "ROI_ALIGN1.R2"}
    assert report.undefined["OutputTensor"].reshape(4, -1).all(1).tolist() == [
        False,
        True,
        True,
        False,
    ]
    # A bilinear sample meeting an infinity, or AlignRegionsToCorners: the whole output.
    infinite = {**INPUTS, "InputTensor": INPUTS["InputTensor"].copy()}
    infinite["InputTensor"][0, 0, 3, 3] = np.inf
    assert check_requires(_align1(), infinite).satisfied  # nearest, average: compared
    linear = _align1(InterpolationMode="DML_INTERPOLATION_MODE_LINEAR")
    assert [v.constraint for v in check_requires(linear, infinite).violations] == ["ROI_ALIGN1.R3"]
    cornered = _align1(AlignRegionsToCorners=True)
    assert [v.constraint for v in check_requires(cornered, INPUTS).violations] == ["ROI_ALIGN1.R4"]


def test_roi_pooling_requires_whole_batch_ids_and_ordered_corners() -> None:
    operator: dict[str, Any] = {
        "type": "DML_OPERATOR_ROI_POOLING",
        "desc": {
            "InputTensor": _tensor("FLOAT32", [2, 1, 5, 5]),
            "ROITensor": _tensor("FLOAT32", [1, 1, 3, 5]),
            "OutputTensor": _tensor("FLOAT32", [3, 1, 2, 2]),
            "SpatialScale": 1.0,
            "PooledSize": {"Height": 2, "Width": 2},
        },
    }
    rois = np.array([[[[1.5, 0, 0, 2, 2], [1, 0, 0, 2, 2], [0, 3, 0, 2, 2]]]], np.float32)
    report = check_requires(
        operator, {"InputTensor": np.zeros((2, 1, 5, 5), np.float32), "ROITensor": rois}
    )
    assert {v.constraint for v in report.violations} == {"ROI_POOLING.R1", "ROI_POOLING.R2"}
    rows = report.undefined["OutputTensor"].reshape(3, -1).all(1)
    assert rows.tolist() == [True, False, True]
    operator["desc"]["ROITensor"]["Sizes"] = [1, 1, 3, 4]
    assert validate_operator(operator).fired() == ("ROI_POOLING.C3",)


def test_onnxruntime_roi_align_and_max_roi_pool_match_the_reference() -> None:
    pytest.importorskip("onnxruntime")
    from dmlspec.backends.onnxruntime import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    operator = _align1(InterpolationMode="DML_INTERPOLATION_MODE_LINEAR")
    rois = [[0.5, 0.5, 2.5, 2.5], [1, 0.5, 3.5, 2.5], [0.5, 1, 2.5, 3.5], [0.6, 0.7, 3.5, 3.5]]
    inputs = {**INPUTS, "ROITensor": np.array(rois, np.float32)}
    got = backend.run(operator, inputs)["OutputTensor"]
    np.testing.assert_allclose(got, reference.run(operator, inputs)["OutputTensor"], rtol=1e-6)
    # Where RoiAlign differs (nearest neighbour; samples outside the input): declined; ONNX
    # has no gradient of RoiAlign.
    with pytest.raises(Unsupported, match="no gradient of RoiAlign"):
        backend.run(_grad(), {**INPUTS, "InputGradientTensor": GRADIENT})
    with pytest.raises(Unsupported, match="nearest"):
        backend.run(_align1(), INPUTS)
    outside = {**inputs, "ROITensor": np.array([[-2, 0, 2, 2]] * 4, np.float32)}
    with pytest.raises(Unsupported, match="outside"):
        backend.run(operator, outside)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_roi_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    run = conformance(
        backend,
        tmp_path,
        "--ops",
        "ROI_ALIGN",
        "ROI_ALIGN1",
        "ROI_ALIGN_GRAD",
        "ROI_POOLING",
        "--workers",
        "0",
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes
    if backend != "onnxruntime":  # which declines what RoiAlign computes otherwise
        assert outcomes.count("passed") >= 60 and "support cells hit 99/99" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "operators"),
    [
        ("CornerPixelRoiAlign", ["ROI_ALIGN", "ROI_ALIGN1"]),
        ("UnscaledRois", ["ROI_ALIGN", "ROI_ALIGN1", "ROI_ALIGN_GRAD", "ROI_POOLING"]),
    ],
)
def test_broken_roi_backends_are_caught(backend: str, operators: list[str], tmp_path: Path) -> None:
    run = conformance(
        f"tests.roi_backends:{backend}", tmp_path, "--ops", *operators, "--workers", "0"
    )
    assert run.returncode == 1, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    failed = {test["operator"] for test in results["tests"] if test["outcome"] == "failed"}
    assert failed == set(operators)
