"""The one way dmlspec wraps an ONNX graph into a model: the operator set every graph of ours is
written against, and the oldest IR version that can carry it.

onnx's `make_model` stamps the IR version of the installed onnx package, which an older
onnxruntime refuses ("Unsupported model IR version: 14, max supported IR version: 13": onnx
1.23 with onnxruntime 1.30), although nothing in our graphs needs it. The oldest IR version
for the operator set loads in every onnxruntime that knows the operator set."""

from __future__ import annotations

from typing import Any

__all__ = ["OPSET", "make_model"]

OPSET = 18


def make_model(graph: Any, opset: int = OPSET, **fields: Any) -> Any:
    """`onnx.helper.make_model(graph, **fields)` importing `opset` (OPSET unless a graph needs
    a newer operator version) of the default domain (and version 1 of any other domain a node
    names), with the oldest IR version that supports it."""
    from onnx import helper

    default = [helper.make_opsetid("", opset)]
    opsets = list(default)
    # a contrib operator's domain (onnxruntime's com.microsoft), at its version 1
    domains = sorted({node.domain for node in graph.node} - {"", "ai.onnx"})
    opsets += [helper.make_opsetid(domain, 1) for domain in domains]
    model = helper.make_model(graph, opset_imports=opsets, **fields)
    model.ir_version = helper.find_min_ir_version_for(default)
    return model
