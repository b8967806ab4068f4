"""The resampling family (RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3, UPSAMPLE_2D): size rules
firing by id (DxDispatch's dml_upsample_2d.json valid, and rejected with a longer output)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dmlspec.validation import validate_operator

from .conftest import REPO_ROOT

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
