"""Read a struct member's C type, as a page writes it, into a dmlspec field kind.

Pages write types as markdown: ``\\_Field\\_size\\_(AxisCount) **const [UINT](/...)\\***``.
`plain_c_type` strips the markup to the declaration the header has
(``_Field_size_(AxisCount) const UINT*``); `classify` says what kind of field that is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CType", "classify", "plain_c_type"]

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_ANNOTATION = re.compile(r"^(_Maybenull_|_Field_size_(?:opt_)?\((\w+)\)|_In_|_Inout_)\s*")

_SCALARS = {
    "UINT": "uint",
    "UINT64": "uint64",
    "INT": "int",
    "FLOAT": "float",
    "BOOL": "bool",
    "DML_TENSOR_DATA_TYPE": "data_type",
    "DML_SCALAR_UNION": "scalar_union",
    "DML_SIZE_2D": "size_2d",
}
_ARRAYS = {"UINT": "uint_array", "INT": "int_array", "FLOAT": "float_array"}


def plain_c_type(markdown: str) -> str:
    """``_Maybenull_ const DML_TENSOR_DESC*`` from the markdown of a ``Type:`` line."""
    text = _LINK.sub(r"\1", markdown)
    text = _TAG.sub("", text)
    text = text.replace("**", "").replace("\\", "")
    text = " ".join(text.split())
    text = re.sub(r"\s*\*", "*", text)
    return re.sub(r"\b(float|uint|int|bool)\b", lambda m: m.group(1).upper(), text)


@dataclass(frozen=True)
class CType:
    """What a C type says about a field."""

    kind: str  # a dmlspec field kind; "input_tensor" is refined by the caller
    base: str  # the type name without qualifiers: UINT, DML_TENSOR_DESC, DML_REDUCE_FUNCTION
    maybe_null: bool  # _Maybenull_ or _Field_size_opt_
    count_field: str | None  # _Field_size_(Count)
    pointer: bool
    problem: str | None = None  # why the declaration is not what the kind implies


def classify(c_type: str) -> CType:
    """The field kind a plain C type declares (tensors come back as input_tensor[_array])."""
    rest, maybe_null, count = c_type.strip(), False, None
    while True:
        match = _ANNOTATION.match(rest)
        if match is None:
            break
        if match.group(1) == "_Maybenull_" or "_opt_" in match.group(1):
            maybe_null = True
        if match.group(2):
            count = match.group(2)
        rest = rest[match.end() :]
    pointer = rest.endswith("*")
    base = rest.removeprefix("const ").rstrip("*").strip()
    problem = None
    if base == "DML_TENSOR_DESC":
        kind = "input_tensor_array" if count else "input_tensor"
    elif base == "DML_OPERATOR_DESC":
        kind = "operator_desc_array" if count else "operator_desc"
    elif base == "DML_SCALE_BIAS":
        kind = "scale_bias"
    elif pointer and base in _ARRAYS:
        kind = _ARRAYS[base]
        if count is None:
            problem = "an array pointer without _Field_size_: its count field is not written"
    elif base in _SCALARS:
        kind = _SCALARS[base]
        if pointer:
            problem = f"{base} is written as a pointer, but the struct holds the value itself"
    elif base.startswith("DML_"):
        kind = "enum"
        if pointer:
            problem = f"the enum {base} is written as a pointer, but the struct holds the value"
    else:
        kind = "unknown"
        problem = f"unknown member type {c_type!r}"
    return CType(kind, base, maybe_null, count, pointer, problem)
