"""The kernel families: one JAX primitive each, the one a spec's `kernel.primitive` names and the
same word as the family's modules in dmlspec.reference and dmlspec.backends.onnxruntime. Each
runs the table entry its spec's `kernel.function` names (the operator), with the static
parameters the kernel section gives.

Each takes arrays shaped exactly as their tensor descs and static (hashable) parameters, and
returns the output array in its full shape (a tuple of them, in the kernel section's order, for
operators with several outputs). DirectML semantics:

- Tensors are right-aligned: `*_dimension_count` selects the meaningful trailing dimensions;
  the leading ones are 1.
- Negative indices count from the end of their dimension for signed index types; unsigned
  ones never do. An index outside its dimension writes nothing and reads zero (the spec leaves
  such results undefined; nothing is read or written out of bounds).
- Overlapping scatter targets keep one of the colliding updates (XLA's choice).
"""

from __future__ import annotations

from .convolution import convolution
from .data_movement import data_movement
from .divisive_normalization import divisive_normalization
from .element_wise import element_wise
from .generator import generator
from .normalization import normalization
from .optimizer import optimizer
from .pooling import pooling
from .quantization import quantization
from .recurrent import recurrent
from .reduction import reduction
from .resampling import resampling
from .roi import roi
from .scatter import scatter

__all__ = [
    "convolution",
    "data_movement",
    "divisive_normalization",
    "element_wise",
    "generator",
    "normalization",
    "optimizer",
    "pooling",
    "quantization",
    "recurrent",
    "reduction",
    "resampling",
    "roi",
    "scatter",
]
