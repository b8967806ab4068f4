"""The typed model of the specs: frozen dataclasses, built only by `loader`.

Each class mirrors one object of the spec files. `to_json()` gives back the object as the
file writes it (the loader's cross-checks guarantee that a model rebuilt from it is equal),
so nothing downstream needs the raw dicts. Expressions are kept as `Expression` (source
text + checked tree); they compare by source text.

One module per concern, each importing only those listed before it: `base` (what they all
share), `constraints`, `tensors` and `common` (spec/common.json), `fields`, `support`,
`semantics`, `kernel`, `examples` and `operator` (spec/operators/*.json), and `catalog`.
Every name is re-exported here: `dmlspec.model.X` is the path to use.
"""

from __future__ import annotations

from .base import Json
from .catalog import Catalog
from .common import (
    DATA_TYPE_ENUM,
    FEATURE_LEVEL_ENUM,
    CommonSpec,
    DataType,
    DocPage,
    Enum,
    EnumMember,
    FeatureLevel,
    OperatorSet,
)
from .constraints import Constraint, UndefinedEffect
from .examples import (
    Erratum,
    Example,
    ExampleFields,
    ExampleTensor,
    ExampleValue,
    example_field_value,
)
from .examples import _frozen as _frozen  # the loader freezes example values with it
from .fields import (
    ARRAY_KINDS,
    OPERATOR_DESC_KINDS,
    TENSOR_ARRAY_KINDS,
    TENSOR_KINDS,
    Definition,
    Field,
    FieldRange,
)
from .kernel import Kernel
from .operator import SPEC_STATUSES, Alias, OperatorSpec, Unencoded
from .semantics import ComparisonRule, NegativeIndices, Semantics
from .support import SupportRow, TensorSupport
from .tensors import (
    DimensionCountRange,
    LayoutRules,
    LayoutUndefined,
    TensorLayout,
    TensorMember,
)

__all__ = [
    "ARRAY_KINDS",
    "DATA_TYPE_ENUM",
    "FEATURE_LEVEL_ENUM",
    "OPERATOR_DESC_KINDS",
    "SPEC_STATUSES",
    "TENSOR_ARRAY_KINDS",
    "TENSOR_KINDS",
    "Alias",
    "Catalog",
    "CommonSpec",
    "ComparisonRule",
    "Constraint",
    "DataType",
    "Definition",
    "DimensionCountRange",
    "DocPage",
    "Enum",
    "EnumMember",
    "Erratum",
    "Example",
    "ExampleFields",
    "ExampleTensor",
    "ExampleValue",
    "FeatureLevel",
    "Field",
    "FieldRange",
    "Json",
    "Kernel",
    "LayoutRules",
    "LayoutUndefined",
    "NegativeIndices",
    "OperatorSet",
    "OperatorSpec",
    "Semantics",
    "SupportRow",
    "TensorLayout",
    "TensorMember",
    "TensorSupport",
    "UndefinedEffect",
    "Unencoded",
    "example_field_value",
]
