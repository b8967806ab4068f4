"""Backends with realistic attention bugs, for the suites' meta tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlspec import reference
from dmlspec.backends import NumpyBackend
from dmlspec.reference.layout import is_strided


def _attention(operator: Mapping[str, Any]) -> bool:
    return str(operator["type"]).removeprefix("DML_OPERATOR_").startswith("MULTIHEAD_ATTENTION")


class ForgottenScale(NumpyBackend):
    """MULTIHEAD_ATTENTION that never multiplies the scores by Scale, otherwise the reference."""

    name = "forgotten-scale"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _attention(operator):
            return reference.run(operator, inputs)
        return reference.run({**operator, "desc": {**operator["desc"], "Scale": 1.0}}, inputs)


class ForgottenMask(NumpyBackend):
    """MULTIHEAD_ATTENTION that ignores MaskTensor, otherwise the reference."""

    name = "forgotten-mask"

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        if not _attention(operator):
            return reference.run(operator, inputs)
        desc = {k: v for k, v in operator["desc"].items() if k != "MaskTensor"}
        kept = {k: v for k, v in inputs.items() if k != "MaskTensor"}
        return reference.run({**operator, "desc": desc}, kept)


# Where each role's tensor is read from: (field, index along a stacked tensor's fourth
# dimension; None for an unstacked one).
_ROLES = {
    "Query": (
        ("QueryTensor", None),
        ("StackedQueryKeyTensor", 0),
        ("StackedQueryKeyValueTensor", 0),
    ),
    "Key": (
        ("KeyTensor", None),
        ("StackedQueryKeyTensor", 1),
        ("StackedKeyValueTensor", 0),
        ("StackedQueryKeyValueTensor", 1),
    ),
    "Value": (
        ("ValueTensor", None),
        ("StackedKeyValueTensor", 1),
        ("StackedQueryKeyValueTensor", 2),
    ),
}


class _SharedHeadsMisread(NumpyBackend):
    """MULTIHEAD_ATTENTION1 whose query head h reads key and value head `shared_head(h, ...)`
    instead of h // (QueryHeadCount / KeyValueHeadCount), for packed descs: the reference run
    on unstacked tensors with each query head's key and value head copied out (one key and
    value head per query head); the present key and value as the reference gives them."""

    name = "shared-heads-misread"

    @staticmethod
    def shared_head(head: int, heads: int, shared: int) -> int:
        raise NotImplementedError

    def run(self, operator: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
        outputs = reference.run(operator, inputs)
        desc = operator["desc"]
        kind = str(operator["type"]).removeprefix("DML_OPERATOR_")
        if kind != "MULTIHEAD_ATTENTION1" or any(
            isinstance(v, Mapping) and is_strided(v) for v in desc.values()
        ):
            return outputs
        heads, shared = int(desc["QueryHeadCount"]), int(desc["KeyValueHeadCount"])
        read = np.array([self.shared_head(h, heads, shared) for h in range(heads)])
        x = {k: v for k, v in inputs.items() if k in ("MaskTensor", "RelativePositionBiasTensor")}
        new = {k: v for k, v in desc.items() if not k.endswith("Tensor")}
        new["KeyValueHeadCount"] = heads
        for role, count in (("Query", heads), ("Key", shared), ("Value", shared)):
            field, index = next((f, i) for f, i in _ROLES[role] if f in inputs)
            data = np.asarray(inputs[field])
            if index is None:
                data = data.reshape(*data.shape[-3:-1], count, -1)
            else:
                data = data[:, :, :, index]
            if role != "Query":
                data = data[:, :, read]
            x[f"{role}Tensor"] = data.reshape(*data.shape[:2], -1)
        if "BiasTensor" in inputs:
            bias = np.asarray(inputs["BiasTensor"]).reshape(-1)
            query_end = x["QueryTensor"].shape[-1]
            size = x["KeyTensor"].shape[-1] // heads
            key_end = query_end + shared * size
            parts = [bias[:query_end]]
            for piece in (bias[query_end:key_end], bias[key_end:]):
                parts.append(piece.reshape(shared, -1)[read].reshape(-1))
            x["BiasTensor"] = np.concatenate(parts)
        for name in ("PastKeyTensor", "PastValueTensor"):
            if name in inputs:
                past = np.asarray(inputs[name])
                x[name] = past.reshape(past.shape[-4:])[:, read]
        for name, data in x.items():
            data_type = desc.get(name, desc["OutputTensor"])["DataType"]  # C1: one float type
            new[name] = {"DataType": data_type, "Sizes": list(np.shape(data))}
        new["OutputTensor"] = {
            "DataType": desc["OutputTensor"]["DataType"],
            "Sizes": list(desc["OutputTensor"]["Sizes"][-3:]),
        }
        result = reference.run({**operator, "desc": new}, x)["OutputTensor"]
        outputs["OutputTensor"] = result.reshape(np.shape(outputs["OutputTensor"]))
        return outputs


class TiledKeyValueHeads(_SharedHeadsMisread):
    """Query head h reads key and value head h % KeyValueHeadCount: the shared heads tiled
    across the query heads (np.tile's order), not each repeated for QueryHeadCount /
    KeyValueHeadCount consecutive ones."""

    name = "tiled-key-value-heads"

    @staticmethod
    def shared_head(head: int, heads: int, shared: int) -> int:
        return head % shared


class GroupSizeMisread(_SharedHeadsMisread):
    """Query head h reads key and value head h // KeyValueHeadCount (divided by the count, not
    by the group size QueryHeadCount / KeyValueHeadCount; the last head where that runs past
    it): with equal counts every query head reads the first key and value head."""

    name = "group-size-misread"

    @staticmethod
    def shared_head(head: int, heads: int, shared: int) -> int:
        return min(head // shared, shared - 1)
