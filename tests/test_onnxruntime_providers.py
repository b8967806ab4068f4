"""The onnxruntime backend on a named execution provider: chosen by `onnxruntime:PROVIDER`
from the CLI, the pytest plugin and Python, with provider options; an unknown provider is one
line and exit 2; expected failures follow the provider."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from dmlspec.backends import BackendLoadError, load_backend
from dmlspec.backends.onnxruntime import OnnxRuntimeBackend
from dmlspec.backends.onnxruntime import provider as providers
from dmlspec.backends.onnxruntime.backend import EXPECTED_FAILURES

from .test_conformance import conformance

ADD = {
    "type": "DML_OPERATOR_ELEMENT_WISE_ADD",
    "desc": {
        name: {"DataType": "FLOAT32", "Sizes": [2, 3]}
        for name in ("ATensor", "BTensor", "OutputTensor")
    },
}


def test_the_cpu_provider_by_name_is_the_default_backend() -> None:
    named = load_backend("onnxruntime:CPUExecutionProvider")
    assert isinstance(named, OnnxRuntimeBackend)
    assert named.name == "onnxruntime" and named.provider == providers.CPU
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)
    result = named.run(ADD, {"ATensor": a, "BTensor": b})
    np.testing.assert_array_equal(result["OutputTensor"], a + b)
    assert named.expected_failures == load_backend("onnxruntime").expected_failures


def test_provider_options_are_parsed_sorted_and_named() -> None:
    provider = providers.parse_provider("CPUExecutionProvider,b=2,a=1")
    assert provider.options == (("a", "1"), ("b", "2"))
    backend = OnnxRuntimeBackend("CPUExecutionProvider", {"b": "2", "a": "1"})
    assert backend.provider == provider
    assert backend.name == "onnxruntime:CPUExecutionProvider,a=1,b=2"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "onnxruntime:NoSuchExecutionProvider",
            "has no execution provider 'NoSuchExecutionProvider'; it has ",
        ),
        ("onnxruntime:CPUExecutionProvider,threads", "are KEY=VALUE after the provider's name"),
        ("onnxruntime:CPUExecutionProvider,a=1,a=2", "option 'a' is given twice"),
        ("onnxruntime:Bad Name", "names are letters, digits and _"),
    ],
)
def test_a_provider_that_cannot_be_used_is_one_line(name: str, message: str) -> None:
    with pytest.raises(BackendLoadError, match=message) as raised:
        load_backend(name)
    assert "\n" not in str(raised.value)


def test_an_unknown_provider_names_those_onnxruntime_has(tmp_path: Path) -> None:
    import onnxruntime

    run = conformance("onnxruntime:NoSuchExecutionProvider", tmp_path, "--ops", "ELEMENT_WISE_ADD")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    for available in onnxruntime.get_available_providers():
        assert available in lines[0]
    assert "pip install onnxruntime-directml" in lines[0]


def test_conformance_on_a_named_provider_passes(tmp_path: Path) -> None:
    run = conformance(
        "onnxruntime:CPUExecutionProvider", tmp_path, "--ops", "ELEMENT_WISE_ADD", "--workers", "0"
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    outcomes = [test["outcome"] for test in results["tests"]]
    assert "failed" not in outcomes and outcomes.count("passed") > 0
    assert results["backend"] == "onnxruntime"


def test_expected_failures_follow_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = json.loads(EXPECTED_FAILURES.read_text())["expected_failures"]
    cpu_only = [e for e in entries if e.get("providers") == ["CPUExecutionProvider"]]
    everywhere = [e for e in entries if "providers" not in e]
    assert cpu_only and everywhere and len(cpu_only) + len(everywhere) == len(entries)
    # On another provider (onnxruntime's CPU provider stands in: the filter reads the name).
    monkeypatch.setattr(providers, "check_available", lambda provider: None)
    from dmlspec.backends.onnxruntime import backend

    monkeypatch.setattr(backend, "check_available", lambda provider: None)
    other = OnnxRuntimeBackend("DmlExecutionProvider")
    assert other.name == "onnxruntime:DmlExecutionProvider"
    assert len(other.expected_failures) == len(everywhere)
    assert all("providers" not in e for e in other.expected_failures)
    assert len(OnnxRuntimeBackend().expected_failures) == len(entries)


def test_sessions_on_another_provider_have_no_cpu_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    made: list[tuple[object, object]] = []

    class Session:
        def __init__(self, model: bytes, options: object, providers: object) -> None:
            made.append((options, providers))

    monkeypatch.setattr(onnxruntime, "InferenceSession", Session)
    options = onnxruntime.SessionOptions()
    providers.new_session(
        b"", options, providers.Provider("DmlExecutionProvider", (("device_id", "1"),))
    )
    assert made[0][1] == [("DmlExecutionProvider", {"device_id": "1"})]
    assert options.get_session_config_entry("session.disable_cpu_ep_fallback") == "1"


def test_directml_sessions_turn_off_memory_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "InferenceSession", lambda *args, **kwargs: None)
    options = onnxruntime.SessionOptions()
    providers.new_session(b"", options, providers.Provider("DmlExecutionProvider"))
    assert not options.enable_mem_pattern
    assert options.execution_mode == onnxruntime.ExecutionMode.ORT_SEQUENTIAL
