"""The benchmark's cases: per operator a large one (about 64 MiB touched) and a small one
(about 1 KiB), each with its variants: dmlspec's JAX kernel (plain, and writing into a donated
buffer) and the peers' counterparts.

One module per family, named as in dmlspec.kernels: element_wise.py, reduction.py,
data_movement.py (with GATHER_ND), generator.py (FILL_VALUE_SEQUENCE), scatter.py
(SCATTER_ND, SCATTER_ELEMENTS), convolution.py (CONVOLUTION, GEMM, MULTIHEAD_ATTENTION) and
pooling.py (MAX_POOLING, AVERAGE_POOLING), resampling.py (RESAMPLE1), normalization.py
(BATCH_NORMALIZATION, MEAN_VARIANCE_NORMALIZATION1 as layer normalization), recurrent.py
(LSTM); the seed operators'
shared helpers in seed_common.py, their family variants described in ../families.py. Here the
table of every case. The seed operators' cases (ScatterND, GatherND, ScatterElements,
FillValueSequence, with 64-bit and FLOAT16 forms) are still reported together as the family
"seed", so runs compare with earlier ones;
`FAMILY_OPERATORS` lists the element-wise, reduction and data movement families' cases (a
large and a small one per operator), `FAMILY_CASES` the convolution, pooling, resampling,
normalization and recurrent families' (one size each, against plain XLA).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..families import Scale
from ..variants import BenchCase
from .convolution import attention_case, convolution_case, gemm_case
from .data_movement import gather_case, gather_nd_case, join_case, padding_case, slice_case
from .element_wise import (
    add_broadcast_case,
    add_case,
    cast_case,
    exp_case,
    greater_than_case,
    softmax_case,
)
from .generator import fill_case
from .normalization import batch_normalization_case, layer_normalization_case
from .pooling import average_pool_case, max_pool_case
from .recurrent import lstm_case
from .reduction import argmax_case, reduce_sum_case
from .resampling import linear_resize_case
from .scatter import scatter_elements_case, scatter_nd_case

__all__ = [
    "FAMILY_CASES",
    "FAMILY_OPERATORS",
    "SIZES",
    "BenchCase",
    "FamilyCase",
    "FamilyOperator",
    "build_cases",
    "case_families",
]


Builder = Callable[[], BenchCase]
SIZES = ("large", "small")


@dataclass(frozen=True)
class FamilyOperator:
    """One operator of the family benchmarks: its cases are `{name}_large`, `{name}_small`."""

    name: str
    family: str  # "element_wise", "reduction" or "data_movement"
    build: Callable[[str, str, Scale], BenchCase]  # (case name, size, scale) -> case


FAMILY_OPERATORS = (
    FamilyOperator("exp", "element_wise", exp_case),
    FamilyOperator("add", "element_wise", add_case),
    FamilyOperator("add_broadcast", "element_wise", add_broadcast_case),
    FamilyOperator("greater_than", "element_wise", greater_than_case),
    FamilyOperator("cast", "element_wise", cast_case),
    FamilyOperator("softmax", "element_wise", softmax_case),
    *(
        FamilyOperator(f"{operator}_{along}", "reduction", functools.partial(case, along=along))
        for operator, case in (("reduce_sum", reduce_sum_case), ("argmax", argmax_case))
        for along in ("inner", "outer")
    ),
    FamilyOperator("slice", "data_movement", slice_case),
    FamilyOperator("padding", "data_movement", padding_case),
    FamilyOperator("join", "data_movement", join_case),
    FamilyOperator("gather", "data_movement", gather_case),
)


@dataclass(frozen=True)
class FamilyCase:
    """One case of the convolution, pooling, resampling or recurrent family, at one size (its
    name is the case's), with targets against plain XLA."""

    name: str
    family: str  # "convolution", "pooling", "resampling", "normalization", "recurrent"
    build: Callable[[str, Scale], BenchCase]  # (case name, scale) -> case
    takes_out: bool = True  # whether its ops function writes into `out=` (one output)
    memory_bound: bool = False  # moves more than it computes: a copy-bandwidth target too


FAMILY_CASES = (
    FamilyCase(
        "convolution_3x3",
        "convolution",
        functools.partial(convolution_case, channels=64, outputs=64, side=56, window=3, groups=1),
    ),
    FamilyCase(
        "convolution_1x1",
        "convolution",
        functools.partial(convolution_case, channels=256, outputs=128, side=28, window=1, groups=1),
    ),
    FamilyCase(
        "convolution_depthwise",
        "convolution",
        functools.partial(
            convolution_case, channels=256, outputs=256, side=14, window=3, groups=256
        ),
    ),
    FamilyCase(
        "gemm_float32", "convolution", functools.partial(gemm_case, side=1024, dtype="float32")
    ),
    FamilyCase(
        "gemm_float16", "convolution", functools.partial(gemm_case, side=1024, dtype="float16")
    ),
    FamilyCase(
        "attention",
        "convolution",
        functools.partial(attention_case, sequence=512, heads=8, head_size=64),
        takes_out=False,
    ),
    FamilyCase(
        "max_pool",
        "pooling",
        functools.partial(max_pool_case, channels=64, side=512),
        memory_bound=True,
    ),
    FamilyCase(
        "average_pool",
        "pooling",
        functools.partial(average_pool_case, channels=32, side=512),
        memory_bound=True,
    ),
    FamilyCase(
        "linear_resize",
        "resampling",
        functools.partial(linear_resize_case, channels=16, side=512),
        memory_bound=True,
    ),
    FamilyCase(
        "batch_normalization",
        "normalization",
        functools.partial(batch_normalization_case, batch=8, channels=64, side=128),
        memory_bound=True,
    ),
    FamilyCase(
        "layer_normalization",
        "normalization",
        functools.partial(layer_normalization_case, rows=4096, hidden=2048),
        memory_bound=True,
    ),
    FamilyCase(
        "lstm",
        "recurrent",
        functools.partial(lstm_case, steps=64, batch=16, inputs=128, hidden=128),
        takes_out=False,
    ),
)


def case_families() -> dict[str, str]:
    """Each case's family ("seed" for the seed operators'), in build_cases' order."""
    families = {name: "seed" for name in build_cases()}
    families.update({f"{o.name}_{size}": o.family for o in FAMILY_OPERATORS for size in SIZES})
    families.update({c.name: c.family for c in FAMILY_CASES})
    return families


def build_cases(scale: float = 1.0) -> dict[str, Builder]:
    """Every case by name, built lazily (a large case holds a few hundred MiB). `scale`
    shrinks the large cases (tests run them at a tiny scale)."""

    def n(value: int) -> int:
        return max(int(value * scale), 4)

    return {
        "scatter_nd_large": lambda: scatter_nd_case(
            "scatter_nd_large", "large", n(65536), 256, n(32768), "float32"
        ),
        "scatter_nd_large_float16": lambda: scatter_nd_case(
            "scatter_nd_large_float16", "large", n(65536), 512, n(32768), "float16"
        ),
        "gather_nd_large": lambda: gather_nd_case(
            "gather_nd_large", "large", n(65536), 256, n(32768), "float32"
        ),
        "gather_nd_large_int64": lambda: gather_nd_case(
            "gather_nd_large_int64", "large", n(32768), 256, n(16384), "int64"
        ),
        "scatter_elements_large": lambda: scatter_elements_case(
            "scatter_elements_large", "large", n(4096), n(2048), "float32"
        ),
        "fill_value_sequence_large": lambda: fill_case(
            "fill_value_sequence_large", "large", n(16 << 20), "float32"
        ),
        "scatter_nd_small": lambda: scatter_nd_case(
            "scatter_nd_small", "small", 16, 16, 4, "float32"
        ),
        "gather_nd_small": lambda: gather_nd_case("gather_nd_small", "small", 16, 16, 4, "float32"),
        "scatter_elements_small": lambda: scatter_elements_case(
            "scatter_elements_small", "small", 16, 4, "float32"
        ),
        "fill_value_sequence_small": lambda: fill_case(
            "fill_value_sequence_small", "small", 256, "float32"
        ),
        **{
            f"{o.name}_{size}": functools.partial(o.build, f"{o.name}_{size}", size, n)
            for o in FAMILY_OPERATORS
            for size in SIZES
        },
        **{c.name: functools.partial(c.build, c.name, n) for c in FAMILY_CASES},
    }
