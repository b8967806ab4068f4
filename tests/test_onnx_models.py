"""Every ONNX model dmlspec builds (the onnxruntime backend's, the exported vectors', the
benchmark's peers) carries the oldest IR version its operator set allows, so that an
onnxruntime older than the installed onnx package loads it (onnx 1.23 stamps IR 14, which
onnxruntime 1.30 refuses)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from dmlspec.backends.onnxruntime import graph as onnxruntime_graph  # noqa: E402
from dmlspec.backends.onnxruntime import node as onnxruntime_node  # noqa: E402
from dmlspec.backends.onnxruntime.backend import OnnxRuntimeBackend  # noqa: E402
from dmlspec.bench.cases import build_cases  # noqa: E402
from dmlspec.interop.onnx_graphs import graph_for  # noqa: E402
from dmlspec.interop.onnx_models import OPSET, make_model  # noqa: E402


def _oldest_ir_version_for_opset() -> int:
    """Read from onnx's release table: the IR version of the first release with OPSET."""
    return min(ir for _, ir, opset, *_ in onnx.helper.VERSION_TABLE if opset >= OPSET)


def test_make_model_stamps_the_oldest_ir_version_of_its_opset() -> None:
    graph = onnx.helper.make_graph([], "empty", [], [])
    model = make_model(graph, producer_name="test")
    assert model.ir_version == _oldest_ir_version_for_opset()
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    assert model.producer_name == "test"


GATHER_ND = {
    "type": "DML_OPERATOR_GATHER_ND",
    "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 2, 1]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "InputDimensionCount": 2,
        "IndicesDimensionCount": 2,
    },
}


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The IR version of every model handed to onnxruntime while the test runs (the backend's
    session caches emptied first, so that its models are built again)."""
    seen: list[int] = []
    real = onnxruntime.InferenceSession

    def recording(model: bytes, *args: Any, **kwargs: Any) -> Any:
        seen.append(onnx.load_from_string(model).ir_version)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", recording)
    onnxruntime_node._session.cache_clear()
    onnxruntime_graph._session.cache_clear()
    yield seen
    onnxruntime_node._session.cache_clear()
    onnxruntime_graph._session.cache_clear()


def test_the_backend_and_the_benchmark_peers_hand_onnxruntime_the_oldest_ir(
    sessions: list[int],
) -> None:
    backend = OnnxRuntimeBackend()
    add = {
        "type": "DML_OPERATOR_ELEMENT_WISE_ADD",
        "desc": {
            name: {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]}
            for name in ("ATensor", "BTensor", "OutputTensor")
        },
    }
    ones = np.ones((1, 1, 1, 4), np.float32)
    assert (backend.run(add, {"ATensor": ones, "BTensor": ones})["OutputTensor"] == 2).all()
    data = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    indices = np.array([1, 0], np.uint32).reshape(1, 1, 2, 1)
    gathered = backend.run(GATHER_ND, {"InputTensor": data, "IndicesTensor": indices})
    assert gathered["OutputTensor"].tolist() == [[[[2, 3], [0, 1]]]]
    build_cases(0.002)["gather_nd_small"]()  # its onnxruntime peers build their sessions
    assert len(sessions) >= 4
    assert set(sessions) == {_oldest_ir_version_for_opset()}


def test_exported_vectors_models_carry_the_oldest_ir() -> None:
    dtypes = {
        "InputTensor": np.dtype(np.float32),
        "IndicesTensor": np.dtype(np.uint32),
        "OutputTensor": np.dtype(np.float32),
    }
    model = graph_for(GATHER_ND, dtypes)
    assert model is not None
    assert model.ir_version == _oldest_ir_version_for_opset()
