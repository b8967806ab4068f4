"""The onnxruntime backend: each operator as a small ONNX graph that onnxruntime runs on an
execution provider (provider.py; the CPU's by default).

backend.py holds the backend and the seed operators' graphs; graph.py the graph builder the
families share; one module per family (element_wise.py, data_movement.py, reduction.py),
named as the family is in dmlspec.kernels and dmlspec.reference.
"""

from __future__ import annotations

from .backend import OnnxRuntimeBackend

__all__ = ["OnnxRuntimeBackend"]
