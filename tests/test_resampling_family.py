"""The resampling family (RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3, UPSAMPLE_2D and the
gradients RESAMPLE_GRAD, RESAMPLE_GRAD1): size rules firing by id (DxDispatch's
dml_upsample_2d.json valid, and rejected with a longer output); the pages' mappings worked by
hand on the reference and the kernel (pixel offsets, rounding directions, free output sizes,
antialiasing, integer results, the gradients' page example) and on onnxruntime;
dml_upsample_2d.json run through dispatch; the suites on jax, numpy and onnxruntime, and
backends ignoring the pixel offsets or rounding the wrong way caught (slow)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlspec import ops, reference
from dmlspec.backends import load_backend
from dmlspec.interop.dispatch import run_model
from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT
from .test_conformance import conformance

DXDISPATCH = REPO_ROOT.parent / "shared" / "reference" / "dxdispatch"


def _dxdispatch_desc(model: str) -> Any:
    document = json.loads((DXDISPATCH / model).read_text())
    (dispatchable,) = document["dispatchables"].values()
    return {"type": dispatchable["type"], "desc": dispatchable["desc"]}


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
def test_dxdispatch_upsample_validates_and_a_longer_output_does_not() -> None:
    operator = _dxdispatch_desc("dml_upsample_2d.json")
    assert validate_operator(operator).valid
    operator["desc"]["OutputTensor"]["Sizes"][-1] += 1
    result = validate_operator(operator)
    assert result.fired() == ("UPSAMPLE_2D.C5",)
    (violation,) = result.violations
    assert violation.path == "/desc/OutputTensor/Sizes"


def _upsample(**fields: Any) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 3]},
        "ScaleSize": {"Width": 1, "Height": 2},
        "InterpolationMode": "DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR",
    }
    desc.update(fields)
    return {"type": "DML_OPERATOR_UPSAMPLE_2D", "desc": desc}


@pytest.mark.parametrize(
    ("rule", "scale", "output"),
    [
        ("UPSAMPLE_2D.C3", {"Width": 1, "Height": 0}, [1, 1, 4, 3]),
        ("UPSAMPLE_2D.C4", {"Width": 0, "Height": 2}, [1, 1, 4, 3]),
        # a height of 2: at most UINT_MAX // 2 = 2147483647 times
        ("UPSAMPLE_2D.C3", {"Width": 1, "Height": 2**31}, [1, 1, 4, 3]),
        ("UPSAMPLE_2D.C5", {"Width": 2, "Height": 2}, [1, 1, 4, 3]),
    ],
)
def test_upsample_scale_rules_fire_alone(rule: str, scale: Any, output: list[int]) -> None:
    assert validate_operator(_upsample()).valid
    broken = _upsample(ScaleSize=scale)
    broken["desc"]["OutputTensor"]["Sizes"] = output
    assert validate_operator(broken).fired() == (rule,)


def _resample(name: str, scales: list[float], **fields: Any) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 5]},
        "InterpolationMode": "DML_INTERPOLATION_MODE_LINEAR",
        "Scales": scales,
    }
    if name == "RESAMPLE":
        desc["ScaleCount"] = len(scales)
    else:
        desc["DimensionCount"] = len(scales)
        desc["InputPixelOffsets"] = [0.5] * len(scales)
        desc["OutputPixelOffsets"] = [-0.5] * len(scales)
    if name in ("RESAMPLE2", "RESAMPLE3"):
        desc["RoundingDirection"] = "DML_AXIS_DIRECTION_DECREASING"
    if name == "RESAMPLE3":
        desc["Antialiased"] = False
    desc.update(fields)
    return {"type": f"DML_OPERATOR_{name}", "desc": desc}


@pytest.mark.parametrize("name", ["RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3"])
def test_scales_must_be_positive_and_the_output_sizes_are_free(name: str) -> None:
    # "the scales don't need to be exactly OutputSize / InputSize": any output sizes
    assert validate_operator(_resample(name, [1.0, 1.0, 1.5, 1.7])).valid
    assert validate_operator(_resample(name, [1.0, 1.0, 0.0, 2.0])).fired() == (f"{name}.C4",)
    assert validate_operator(_resample(name, [1.0, -1.0, 1.0, 2.0])).fired() == (f"{name}.C4",)


def test_resample_scale_count_is_the_rank() -> None:
    assert validate_operator(_resample("RESAMPLE", [1.0, 1.5, 2.0])).fired() == ("RESAMPLE.C3",)


# ---- the pages' definitions, worked by hand on the reference and the kernel


def _both(operator: dict[str, Any], x: np.ndarray) -> list[np.ndarray]:
    inputs = {"InputTensor": x}
    return [
        reference.run(operator, inputs)["OutputTensor"],
        ops.run(operator, inputs)["OutputTensor"],
    ]


def _line(
    name: str, mode: str, scale: float, offsets: tuple[float, float], outputs: int, **fields: Any
) -> dict[str, Any]:
    operator = _resample(
        name, [scale], InterpolationMode=f"DML_INTERPOLATION_MODE_{mode}", **fields
    )
    desc = operator["desc"]
    desc["InputTensor"] = {"DataType": "FLOAT32", "Sizes": [4]}
    desc["OutputTensor"] = {"DataType": "FLOAT32", "Sizes": [outputs]}
    if name != "RESAMPLE":
        desc["InputPixelOffsets"], desc["OutputPixelOffsets"] = [offsets[0]], [offsets[1]]
    return operator


LINE = np.array([10, 20, 30, 40], np.float32)


@pytest.mark.parametrize(
    ("name", "mode", "offsets", "fields", "expected"),
    [
        # pixel centres, c = (x + 0.5) / 2 - 0.5: -0.25, 0.25, 0.75, ... (clamped at the edges)
        ("RESAMPLE", "LINEAR", (0.5, -0.5), {}, [10, 12.5, 17.5, 22.5, 27.5, 32.5, 37.5, 40]),
        ("RESAMPLE1", "LINEAR", (0.5, -0.5), {}, [10, 12.5, 17.5, 22.5, 27.5, 32.5, 37.5, 40]),
        ("RESAMPLE", "NEAREST_NEIGHBOR", (0.5, -0.5), {}, [10, 10, 20, 20, 30, 30, 40, 40]),
        # corners, c = x / 2: the offsets move every sample half an input element
        ("RESAMPLE1", "LINEAR", (0, 0), {}, [10, 15, 20, 25, 30, 35, 40, 40]),
        # halves rounded up: c = 0.5 reads element 1
        ("RESAMPLE1", "NEAREST_NEIGHBOR", (0, 0), {}, [10, 20, 20, 30, 30, 40, 40, 40]),
        # an input offset of 1 samples one element earlier, an output offset of 2 two outputs later
        ("RESAMPLE1", "LINEAR", (1, 2), {}, [10, 10, 10, 10, 10, 15, 20, 25]),
        (
            "RESAMPLE2",
            "NEAREST_NEIGHBOR",
            (0, 0),
            {"RoundingDirection": "DML_AXIS_DIRECTION_DECREASING"},
            [10, 10, 20, 20, 30, 30, 40, 40],
        ),
        (
            "RESAMPLE2",
            "NEAREST_NEIGHBOR",
            (0, 0),
            {"RoundingDirection": "DML_AXIS_DIRECTION_INCREASING"},
            [10, 20, 20, 30, 30, 40, 40, 40],
        ),
        # LINEAR ignores the rounding direction
        (
            "RESAMPLE2",
            "LINEAR",
            (0, 0),
            {"RoundingDirection": "DML_AXIS_DIRECTION_INCREASING"},
            [10, 15, 20, 25, 30, 35, 40, 40],
        ),
    ],
)
def test_upsampling_a_line_by_two(
    name: str, mode: str, offsets: tuple[float, float], fields: Any, expected: list[float]
) -> None:
    operator = _line(name, mode, 2.0, offsets, 8, **fields)
    want = np.array(expected, np.float32)
    for got in _both(operator, LINE):
        np.testing.assert_array_equal(got, want)


def test_a_free_output_size_crops_or_clamps() -> None:
    # "If the input after scaling is larger than the output bound, then we crop it ... if ...
    # smaller, the output edges are clamped": 3 outputs of a 2x upsampling, then 10
    for outputs, expected in [
        (3, [10, 12.5, 17.5]),
        (10, [10, 12.5, 17.5, 22.5, 27.5, 32.5, 37.5, 40, 40, 40]),
    ]:
        operator = _line("RESAMPLE", "LINEAR", 2.0, (0.5, -0.5), outputs)
        for got in _both(operator, LINE):
            np.testing.assert_array_equal(got, np.array(expected, np.float32))


def test_antialiasing_stretches_the_linear_filter_below_half_scale() -> None:
    x = np.arange(0, 32, 4, dtype=np.float32)  # 0, 4, ..., 28
    operator = _line("RESAMPLE3", "LINEAR", 0.25, (0.5, -0.5), 2, Antialiased=True)
    operator["desc"]["InputTensor"]["Sizes"] = [8]
    # c = 4x + 1.5; k = 4: weights 1 - |i - c| / 4 for i = c - 3.5 ... c + 3.5 (sum 4), the
    # elements before 0 and after 7 clamped: (0.875 * 4 + 0.625 * 8 + ...) / 4
    stretched = np.array([26.5 / 4, 85.5 / 4], np.float32)
    for got in _both(operator, x):
        np.testing.assert_allclose(got, stretched, rtol=2**-22)
    # without Antialiased, or at a scale of 1/2 or more, plain linear: (4 + 8) / 2, (20 + 24) / 2
    for scale, antialiased, outputs, expected in [
        (0.25, False, 2, [6, 22]),
        (0.5, True, 4, [2, 10, 18, 26]),
    ]:
        operator = _line(
            "RESAMPLE3", "LINEAR", scale, (0.5, -0.5), outputs, Antialiased=antialiased
        )
        operator["desc"]["InputTensor"]["Sizes"] = [8]
        for got in _both(operator, x):
            np.testing.assert_array_equal(got, np.array(expected, np.float32))


def test_integer_linear_results_round_to_the_nearest() -> None:
    operator = _line("RESAMPLE1", "LINEAR", 4.0, (0, 0), 4)
    for tensor in ("InputTensor", "OutputTensor"):
        operator["desc"][tensor]["DataType"] = "UINT8"
    operator["desc"]["InputTensor"]["Sizes"] = [2]
    # c = x / 4 between 0 and 255: 0, 63.75, 127.5, 191.25 -> 0, 64, 128 (halves to even), 191
    for got in _both(operator, np.array([0, 255], np.uint8)):
        np.testing.assert_array_equal(got, np.array([0, 64, 128, 191], np.uint8))


def test_a_float32_coordinate_near_a_boundary_may_round_either_way() -> None:
    # Scale 1/3 is not exact in FLOAT32: c = 1 / 0.33333334 = 2.99999994, ceil 3; a device
    # computing 1 * (1 / Scale) gets 3.0 exactly (ceil 3) or above (ceil 4): both allowed.
    operator = _line("RESAMPLE2", "NEAREST_NEIGHBOR", 1 / 3, (0, 0), 3)
    operator["desc"]["RoundingDirection"] = "DML_AXIS_DIRECTION_INCREASING"
    operator["desc"]["InputTensor"]["Sizes"] = [6]
    x = np.array([10, 20, 30, 40, 50, 60], np.float32)
    output, allowed = reference.run_recording(operator, {"InputTensor": x})
    np.testing.assert_array_equal(output["OutputTensor"], [10, 40, 60])
    assert {
        cell: sorted(float(v) for v in values) for cell, values in allowed["OutputTensor"].items()
    } == {(1,): [40.0, 50.0]}


UPSAMPLE_INPUT = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # pixel centres: each row and column at -0.25, 0.25, 0.75, 1.25 (clamped)
        (
            "LINEAR",
            [
                [1, 1.25, 1.75, 2],
                [1.5, 1.75, 2.25, 2.5],
                [2.5, 2.75, 3.25, 3.5],
                [3, 3.25, 3.75, 4],
            ],
        ),
        ("NEAREST_NEIGHBOR", [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]),
    ],
)
def test_upsample_2d_by_hand(mode: str, expected: list[list[float]]) -> None:
    operator = _upsample(
        InputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        OutputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
        ScaleSize={"Width": 2, "Height": 2},
        InterpolationMode=f"DML_INTERPOLATION_MODE_{mode}",
    )
    for got in _both(operator, UPSAMPLE_INPUT):
        np.testing.assert_array_equal(got[0, 0], np.array(expected, np.float32))


@pytest.mark.skipif(not DXDISPATCH.is_dir(), reason="needs ../shared/reference/dxdispatch")
def test_dxdispatch_upsample_runs(capsys: pytest.CaptureFixture[str]) -> None:
    run_model(DXDISPATCH / "dml_upsample_2d.json", load_backend("jax"), False)
    printed = capsys.readouterr().out
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", printed)]
    expected = [1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4]
    assert numbers[-16:] == expected, printed


def _gradient(name: str, mode: str, offsets: tuple[float, float], **fields: Any) -> Any:
    desc: dict[str, Any] = {
        "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 3]},
        "OutputGradientTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "InterpolationMode": f"DML_INTERPOLATION_MODE_{mode}",
        "DimensionCount": 4,
        "Scales": [1.0, 1.0, 0.5, 1.5],
        "InputPixelOffsets": [offsets[0]] * 4,
        "OutputPixelOffsets": [offsets[1]] * 4,
    }
    desc.update(fields)
    return {"type": f"DML_OPERATOR_{name}", "desc": desc}


@pytest.mark.parametrize(
    ("name", "offsets", "fields"),
    [
        # the page gives no offsets; [[1, 2], [3, 4]] -> [1, 1, 2] holds with these two
        ("RESAMPLE_GRAD", (0.5, 0.0), {}),
        ("RESAMPLE_GRAD1", (0.0, 0.0), {"RoundingDirection": "DML_AXIS_DIRECTION_DECREASING"}),
    ],
)
def test_the_gradient_pages_example(name: str, offsets: tuple[float, float], fields: Any) -> None:
    forward = "RESAMPLE1" if name == "RESAMPLE_GRAD" else "RESAMPLE2"
    image = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 1, 2, 2)
    resampled = _resample(forward, [1.0, 1.0, 0.5, 1.5], **fields)
    resampled["desc"].update(
        InterpolationMode="DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR",
        InputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        OutputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 1, 3]},
        InputPixelOffsets=[offsets[0]] * 4,
        OutputPixelOffsets=[offsets[1]] * 4,
    )
    for got in _both(resampled, image):
        np.testing.assert_array_equal(got.reshape(-1), [1, 1, 2])
    operator = _gradient(name, "NEAREST_NEIGHBOR", offsets, **fields)
    inputs = {"InputGradientTensor": np.array([4, 5, 6], np.float32).reshape(1, 1, 1, 3)}
    for run in (reference.run, ops.run):
        got = run(operator, inputs)["OutputGradientTensor"]
        np.testing.assert_array_equal(got.reshape(2, 2), [[9, 6], [0, 0]])


def test_a_linear_gradient_spreads_by_the_forward_weights() -> None:
    # RESAMPLE1 LINEAR of 2 elements to 4 at corners (c = x / 2: 0, 0.5, 1, 1.5 clamped):
    # weights [[1, 0], [0.5, 0.5], [0, 1], [0, 1]]; the gradient is their transpose times g
    operator = _gradient("RESAMPLE_GRAD", "LINEAR", (0.0, 0.0), Scales=[2.0])
    operator["desc"].update(
        DimensionCount=1,
        InputPixelOffsets=[0.0],
        OutputPixelOffsets=[0.0],
        InputGradientTensor={"DataType": "FLOAT32", "Sizes": [4]},
        OutputGradientTensor={"DataType": "FLOAT32", "Sizes": [2]},
    )
    inputs = {"InputGradientTensor": np.array([1, 10, 100, 1000], np.float32)}
    for run in (reference.run, ops.run):
        got = run(operator, inputs)["OutputGradientTensor"]
        np.testing.assert_array_equal(got, [1 + 5, 5 + 100 + 1000])


# ---- the suites


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["IgnoredPixelOffsets", "RoundedTheWrongWay"])
def test_broken_resampling_is_caught(backend: str, tmp_path: Path) -> None:
    operators = ("RESAMPLE2", "RESAMPLE_GRAD1")
    run = conformance(
        f"tests.resampling_backends:{backend}", tmp_path, "--ops", *operators, "--workers", "0"
    )
    assert run.returncode == 1, run.stdout[-3000:]
    assert "failed: 2 operators: RESAMPLE2" in run.stdout  # the gradient too
    junit = (tmp_path / "junit.xml").read_text()
    assert "OutputTensor differs from the reference" in junit


def test_onnxruntime_resize_graphs_follow_the_same_mappings() -> None:
    pytest.importorskip("onnxruntime")
    backend = load_backend("onnxruntime")
    cases = [
        (_line("RESAMPLE1", "LINEAR", 2.0, (1, 2), 8), [10, 10, 10, 10, 10, 15, 20, 25]),
        (_line("RESAMPLE1", "NEAREST_NEIGHBOR", 2.0, (0, 0), 8), [10, 20, 20, 30, 30, 40, 40, 40]),
        (
            _line(
                "RESAMPLE2",
                "NEAREST_NEIGHBOR",
                2.0,
                (0, 0),
                8,
                RoundingDirection="DML_AXIS_DIRECTION_DECREASING",
            ),
            [10, 10, 20, 20, 30, 30, 40, 40],
        ),
        (_line("RESAMPLE", "LINEAR", 2.0, (0.5, -0.5), 3), [10, 12.5, 17.5]),
        # 4 elements padded to 10 for a 10-element output (Resize copies a same-shaped input)
        (
            _line("RESAMPLE", "NEAREST_NEIGHBOR", 2.5, (0.5, -0.5), 10),
            [10, 10, 20, 20, 20, 30, 30, 40, 40, 40],
        ),
    ]
    for operator, expected in cases:
        got = backend.run(operator, {"InputTensor": LINE})["OutputTensor"]
        np.testing.assert_array_equal(got, np.array(expected, np.float32))
        np.testing.assert_array_equal(
            got, reference.run(operator, {"InputTensor": LINE})["OutputTensor"]
        )


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jax", "numpy", "onnxruntime"])
def test_the_resampling_suites_pass(backend: str, tmp_path: Path) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    operators = ["RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3", "UPSAMPLE_2D"]
    if backend != "onnxruntime":  # onnxruntime has no gradient graphs
        operators += ["RESAMPLE_GRAD", "RESAMPLE_GRAD1"]
    run = conformance(backend, tmp_path, "--ops", *operators, "--workers", "0")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") >= 100
    cells = 150 if len(operators) == 7 else 120
    assert f"support cells hit {cells}/{cells}" in run.stdout
