"""Small ONNX graphs run by onnxruntime's CPU provider: what the onnxruntime backend's operator
modules (element-wise, data movement, reductions) build their operators from.

A `Graph` names values as it builds them and knows each value's NumPy type. Its inputs are fed
arrays (tensors and scalar parameters alike), so that one session serves every value; sessions
are cached by the graph's structure (the nodes, their attributes, the inputs' types and ranks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import Unsupported
from ...interop.onnx_models import OPSET, make_model
from .provider import Provider, new_session, opened

__all__ = [
    "ONNX_TYPES",
    "Body",
    "Builder",
    "Call",
    "Graph",
    "bit_type",
    "carried",
    "held_like",
    "run_operator",
    "single_threaded",
]

# ONNX's element types, by NumPy name (onnx.TensorProto values).
ONNX_TYPES = {
    "float32": 1,
    "uint8": 2,
    "int8": 3,
    "uint16": 4,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "bool": 9,
    "float16": 10,
    "float64": 11,
    "uint32": 12,
    "uint64": 13,
    "uint4": 21,  # opset 21 (QuantizeLinear, DequantizeLinear, Cast)
    "int4": 22,
}

# (op_type, inputs, outputs, attributes): hashable, so that graphs key the session cache.
Node = tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, Any], ...]]


@dataclass(frozen=True)
class Body:
    """A subgraph attribute (Scan's body): its inputs and outputs as (name, NumPy type name,
    rank), in order, and its nodes; built into an ONNX GraphProto when the session is made."""

    inputs: tuple[tuple[str, str, int], ...]
    nodes: tuple[Node, ...]
    outputs: tuple[tuple[str, str, int], ...]


def bit_type(dtype: Any) -> np.dtype[Any]:
    """The unsigned integer type of `dtype`'s width (a float's encoding, moved exactly)."""
    return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


class Graph:
    """An ONNX graph under construction: values are names, each with a known NumPy type."""

    def __init__(self, opset: int = OPSET) -> None:
        self.opset = opset  # the default domain's version the graph imports
        self.feeds: dict[str, np.ndarray] = {}
        self.nodes: list[Node] = []
        self.types: dict[str, np.dtype[Any]] = {}
        self.shape: tuple[int, ...] = ()  # the operator's (first input's) logical shape

    def _name(self, prefix: str) -> str:
        return f"{prefix}{len(self.types)}"

    def feed(self, array: Any, dtype: Any = None) -> str:
        """A graph input holding `array` (a tensor, or a scalar parameter)."""
        value = np.asarray(array, dtype=dtype)
        name = self._name("in")
        self.feeds[name] = value
        self.types[name] = value.dtype
        return name

    def ops(
        self, op_type: str, *inputs: str, dtypes: Sequence[Any], **attributes: Any
    ) -> tuple[str, ...]:
        """One node with an output per entry of `dtypes` (its outputs' types)."""
        outputs = []
        for dtype in dtypes:
            name = self._name("v")
            self.types[name] = np.dtype(dtype)
            outputs.append(name)
        frozen = tuple(
            sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attributes.items())
        )
        self.nodes.append((op_type, inputs, tuple(outputs), frozen))
        return tuple(outputs)

    def op(self, op_type: str, *inputs: str, dtype: Any = None, **attributes: Any) -> str:
        """One node; its output has `dtype` (default: its first input's type)."""
        (output,) = self.ops(
            op_type,
            *inputs,
            dtypes=[dtype if dtype is not None else self.types[inputs[0]]],
            **attributes,
        )
        return output

    def dtype(self, value: str) -> np.dtype[Any]:
        return self.types[value]

    def cast(self, value: str, dtype: Any) -> str:
        dtype = np.dtype(dtype)
        if self.types[value] == dtype:
            return value
        return self.op("Cast", value, dtype=dtype, to=ONNX_TYPES[dtype.name])

    def scalar(self, number: Any, like: str) -> str:
        """A scalar parameter of `like`'s type (fed, so that sessions do not depend on it)."""
        return self.feed(np.array(number).astype(self.types[like]))

    def int64(self, values: Any) -> str:
        """An int64 tensor (sizes, axes, starts) fed as a parameter."""
        return self.feed(np.array(values, dtype=np.int64))

    def where(self, condition: str, a: str, b: str) -> str:
        """Where, also for the types onnxruntime's Where lacks (via a same-width type)."""
        dtype = self.types[a]
        carrier = {"uint64": "int64", "int16": "int32", "uint16": "uint32"}.get(dtype.name)
        if carrier is None and dtype.kind == "f":
            # onnxruntime's float Where turns a -0 taken from its first branch into +0 (its
            # second branch keeps it): the condition is negated and the branches swapped.
            negated = self.op("Not", condition, dtype=np.bool_)
            return self.op("Where", negated, self.cast(b, dtype), a, dtype=dtype)
        if carrier is None:
            return self.op("Where", condition, a, self.cast(b, dtype), dtype=dtype)
        chosen = self.op(
            "Where", condition, self.cast(a, carrier), self.cast(b, carrier), dtype=carrier
        )
        return self.cast(chosen, dtype)

    def compare(self, op_type: str, a: str, b: str) -> str:
        return self.op(op_type, a, b, dtype=np.bool_)

    def reshape(self, value: str, shape: Sequence[int]) -> str:
        return self.op("Reshape", value, self.int64(list(shape)))

    def run(self, output: str) -> np.ndarray:
        """`output` computed by onnxruntime; it has the rank of the operator's shape."""
        (result,) = self.run_all([output], [len(self.shape)])
        return result

    def run_all(self, outputs: Sequence[str], ranks: Sequence[int]) -> list[np.ndarray]:
        """The values `outputs` (of ranks `ranks`) computed by onnxruntime in one run."""
        from onnxruntime.capi.onnxruntime_pybind11_state import (
            Fail,
            InvalidArgument,
            InvalidGraph,
            NotImplemented,
        )

        signature = tuple(
            (name, array.dtype.name, array.ndim) for name, array in self.feeds.items()
        )
        wanted = tuple(
            (name, self.types[name].name, rank) for name, rank in zip(outputs, ranks, strict=True)
        )
        ops = sorted({node[0] for node in self.nodes})
        try:
            key = (signature, tuple(self.nodes), wanted, self.opset)
            session = opened(_session, key, ", ".join(ops))
            results = session.run(list(dict.fromkeys(outputs)), self.feeds)
        except (NotImplemented, InvalidGraph) as error:
            raise Unsupported(f"onnxruntime cannot run {', '.join(ops)} here: {error}") from None
        except (Fail, InvalidArgument) as error:
            raise RuntimeError(f"onnxruntime failed: {error}") from None
        by_name = dict(zip(dict.fromkeys(outputs), results, strict=True))
        return [np.asarray(by_name[name]) for name in outputs]


def _make_nodes(nodes: Sequence[Node]) -> list[Any]:
    from onnx import helper

    made = []
    for op_type, ins, outs, attributes in nodes:
        converted = {
            key: _make_body(value) if isinstance(value, Body) else value
            for key, value in attributes
        }
        made.append(helper.make_node(op_type, list(ins), list(outs), **converted))
    return made


def _make_body(body: Body) -> Any:
    from onnx import helper

    return helper.make_graph(
        _make_nodes(body.nodes),
        "body",
        [_value_info(*value) for value in body.inputs],
        [_value_info(*value) for value in body.outputs],
    )


def single_threaded(options: Any) -> None:
    """Run a session on the calling thread. The suites' cases are small, and a session's own
    thread pool spins between runs: on this 2-core machine a worker's onnxruntime process took
    twice the CPU time of its cases, taken from the process drawing and checking them."""
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")


def _value_info(name: str, dtype: str, rank: int) -> Any:
    from onnx import helper

    return helper.make_tensor_value_info(name, ONNX_TYPES[dtype], [None] * rank)


@lru_cache(maxsize=1024)
def _session(key: tuple[Any, ...], provider: Provider) -> Any:
    import onnx
    import onnxruntime
    from onnx import helper

    signature, nodes, outputs, opset = key
    graph = helper.make_graph(
        _make_nodes(nodes),
        "dmlspec",
        [_value_info(*value) for value in signature],
        [_value_info(*value) for value in dict.fromkeys(outputs)],
    )
    model = make_model(graph, opset)
    onnx.checker.check_model(model)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    single_threaded(options)
    # The kernels as the graph names them, no fusions or rewrites (and sessions made in a
    # tenth of the time).
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return new_session(model.SerializeToString(), options, provider)


# ---- operators with fields: what the data-movement and reduction modules build ------------


@dataclass
class Call:
    """One operator being built: its desc, its packed inputs (logical arrays; a list of them for
    a tensor array) and the graph."""

    kind: str  # the operator's name, no DML_OPERATOR_ prefix
    g: Graph
    desc: Mapping[str, Any]
    inputs: Mapping[str, Any]

    def tensor(self, field: str, item: int | None = None) -> Mapping[str, Any]:
        raw = self.desc[field] if item is None else self.desc[field][item]
        return raw.get("Desc", raw)  # type: ignore[no-any-return]

    def sizes(self, field: str, item: int | None = None) -> list[int]:
        return [int(s) for s in self.tensor(field, item)["Sizes"]]

    def dtype(self, field: str, item: int | None = None) -> np.dtype[Any]:
        from ...reference.tensors import numpy_dtype

        return numpy_dtype(str(self.tensor(field, item)["DataType"]))

    def given(self, field: str) -> bool:
        return self.inputs.get(field) is not None

    def array(self, field: str) -> np.ndarray:
        if not self.given(field):
            raise ValueError(f"the input {field} is missing")
        return np.asarray(self.inputs[field])

    def feed(self, field: str, types: frozenset[str] | None = None) -> str:
        """The input `field`, carried in a type of `types` (None: any) where it can be moved
        exactly (see `carried`)."""
        return carried(self.g, self.array(field), types)

    def enum(self, field: str, prefix: str, default: str | None = None) -> str:
        value = self.desc.get(field, default)
        if value is None:
            raise ValueError(f"the field {field} is missing")
        return str(value).removeprefix(prefix)

    def flag(self, field: str) -> bool:
        """A BOOL field (true/false, 0/1 or the pages' TRUE/FALSE)."""
        value = self.desc.get(field, False)
        return value.upper() == "TRUE" if isinstance(value, str) else bool(value)


# A builder maps an operator's fields to graph values: one per output field, a list of them for
# an output tensor array.
Builder = Callable[[Call], Mapping[str, "str | Sequence[str]"]]


def carried(g: Graph, array: np.ndarray, types: frozenset[str] | None) -> str:
    """`array` fed to the graph for an operator that moves data without reading it: as it is
    where `types` (None: any) hold its type, else as its encoding (floats as the unsigned type
    of their width), widened to int64 where that is what `types` hold (exact, uint64 wrapping
    there and back)."""
    if types is None or array.dtype.name in types:
        return g.feed(array)
    if array.dtype.kind == "f":
        array = np.ascontiguousarray(array).view(bit_type(array.dtype))
    value = g.feed(array)
    if array.dtype.name in types:
        return value
    if "int64" in types:
        return g.cast(value, np.int64)
    raise Unsupported(f"no onnxruntime type carries {array.dtype.name} here")


def held_like(g: Graph, value: np.ndarray, like: str) -> str:
    """A scalar of an output's type (a padding or fill value) fed as `like` carries it."""
    target = g.dtype(like)
    if value.dtype.kind == "f" and target.kind != "f":
        value = value.view(bit_type(value.dtype))
    return g.feed(value.astype(target))


def run_operator(
    kind: str, build: Builder, desc: Mapping[str, Any], inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """Builds the operator's graph, runs it once and returns each output field shaped as its
    Sizes with its DataType (a list of arrays for a tensor array)."""
    call = Call(kind, Graph(), desc, inputs)
    g = call.g
    values = build(call)
    names: list[str] = []
    ranks: list[int] = []
    plan: list[tuple[str, int | None, np.dtype[Any]]] = []
    for field, value in values.items():
        many = not isinstance(value, str)
        items: list[str] = [value] if isinstance(value, str) else list(value)
        for index, item in enumerate(items):
            position = index if many else None
            sizes, dtype = call.sizes(field, position), call.dtype(field, position)
            carrier = bit_type(dtype) if dtype.kind == "f" and g.dtype(item).kind != "f" else dtype
            names.append(g.reshape(g.cast(item, carrier), sizes))
            ranks.append(len(sizes))
            plan.append((field, position, dtype))
    results: dict[str, Any] = {}
    for (field, position, dtype), array in zip(plan, g.run_all(names, ranks), strict=True):
        array = array.view(dtype) if array.dtype != dtype else array
        if position is None:
            results[field] = array
        else:
            results.setdefault(field, []).append(array)
    return results


# ---- values the family modules share ------------------------------------------------------


def meaningful_sizes(sizes: Sequence[int], count: int, field: str, count_field: str) -> list[int]:
    """The trailing `count` sizes; the leading ones must be 1 (the pages' right alignment)."""
    leading = list(sizes[: len(sizes) - count])
    if any(size != 1 for size in leading):
        raise Unsupported(
            f"{field}.Sizes {list(sizes)} has sizes other than 1 before its {count_field} "
            f"({count}) meaningful ones; the page gives them no meaning"
        )
    return list(sizes[len(sizes) - count :])


def float_held(number: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """A FLOAT field's value in a tensor's type: floats round; integer types take the value
    truncated toward zero ("10.6 will become 10"), saturated (NaN as 0) where it does not fit,
    which the pages leave open."""
    value = float(number)
    if dtype.kind == "f":
        return np.array(value).astype(dtype)
    info = np.iinfo(dtype)
    whole = 0 if math.isnan(value) else max(info.min, min(info.max, math.trunc(value)))
    return np.array(whole, dtype)


def union_held(number: Any, data_type: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """A DML_SCALAR_UNION (a number, or {"Float32": x}) as its member of `data_type` holds it
    (the spec's as_type rule), in the tensor's type."""
    from ...expr.scalars import scalar_union_value
    from ...reference.tensors import numpy_dtype

    if isinstance(number, Mapping):
        (number,) = number.values()
    member = numpy_dtype(str(data_type))
    return np.array(scalar_union_value(number, member)).astype(dtype)
