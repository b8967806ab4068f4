"""What the family benchmarks (element-wise, reductions, data movement) share: each case's
dmlspec variants, its peers' variants, and how far a correct float output may be from the
expected one (the spec's comparison rule).

Every family case has the same three dmlspec variants:
- "numpy in": `ops.<op>` called with NumPy arrays, a fresh output, materialized
  (block_until_ready): the user's first path;
- "jax": the same call with the inputs already on the device (jax arrays);
- "jax out=": the same, writing into a donated buffer shaped like the output;
and two references that are never peers, each making a new output and writing into a donated
buffer: the kernel's own program under one jax.jit ("kernel jit": what the call costs without
dmlspec's per-call work) and a jax.numpy formulation of the operation ("plain xla": what XLA
makes of it said plainly). The call against the first measures dmlspec's per-call overhead;
the first against the second, the kernel's formulation; the second against the peers, XLA's
CPU code.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from .. import reference
from ..accuracy import accumulation_type, allowed_error
from ..binding import bind_desc
from ..conformance.cases import Case
from ..conformance.check import accumulation_tolerance
from ..loading import load_catalog
from ..model import Catalog
from .peers import OnnxNode, onnxruntime_peers, optional, torch_peer
from .timing import Tolerance, Variant
from .variants import IN_PLACE, NEW, Buffer, device, first, from_tensor, ready

__all__ = [
    "KERNEL_JIT",
    "ON_NUMPY_ARRAYS",
    "PLAIN_XLA",
    "Scale",
    "compiled_text",
    "dmlspec_variants",
    "dot_product_expected",
    "is_plain_xla_on_numpy",
    "jitted",
    "normal",
    "numpy_variants",
    "onnxruntime_variants",
    "operator_json",
    "plain_xla_on_numpy",
    "sized",
    "spec_tolerance",
    "tensor_desc",
    "torch_variants",
]

ON_NUMPY_ARRAYS = "on NumPy arrays"  # the end of plain XLA's name when given NumPy arrays
KERNEL_JIT = "kernel jit"  # library of a kernel's own program, jitted whole (not a peer)
PLAIN_XLA = "plain xla"  # library of jax.numpy formulations (not a peer)
Scale = Callable[[int], int]  # a large case's size, scaled (tests run tiny cases)
Fetch = Callable[[Any], Any]


@functools.cache
def _catalog() -> Catalog:
    return load_catalog()


def tensor_desc(array: np.ndarray) -> dict[str, Any]:
    """The packed tensor desc of an array: DataType by the spec's NumPy names, Sizes."""
    names = {d.numpy: d.name for d in _catalog().common.data_types if d.numpy}
    return {"DataType": names[array.dtype.name], "Sizes": list(array.shape)}


def operator_json(operator: str, tensors: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Operator JSON for arrays by field (a list of arrays for a tensor array) and fields."""
    desc: dict[str, Any] = {
        name: [tensor_desc(a) for a in value] if isinstance(value, list) else tensor_desc(value)
        for name, value in tensors.items()
    }
    return {"type": operator, "desc": {**desc, **fields}}


def spec_tolerance(
    operator: dict[str, Any],
    inputs: dict[str, Any],
    expected: np.ndarray,
    field: str = "OutputTensor",
) -> Tolerance | None:
    """The spec's comparison rule for this output (the one the conformance suites apply):
    None where it is exact (compare bitwise), else its ULP bound, with the accumulated-rounding
    term (terms * eps * magnitude) for rules that have one, computed as conformance does."""
    catalog = _catalog()
    spec = catalog.operator(operator["type"])
    data_type = str(operator["desc"][field]["DataType"])
    env = bind_desc(catalog.common, spec, operator["desc"])
    rule = spec.checked_semantics.comparison_for(
        field, catalog.common.data_type(data_type).kind, data_type, env
    )
    if rule.rule == "exact" or rule.max_ulps is None:
        return None
    if rule.ulp_scale is not None:  # none of the benchmark's operators has one
        raise ValueError(f"{spec.name}: a comparison rule with ulp_scale is not supported here")
    absolute: float | np.ndarray | None = rule.absolute_tolerance(env)
    text = f"{spec.name} {field} {data_type}: {rule.max_ulps} ULPs"
    if rule.terms is not None:
        case = Case(operator, inputs, catalog.common.highest_feature_level.name, 0)
        absolute = accumulation_tolerance(rule, env, case, field, expected) + (absolute or 0.0)
        text += f" + {rule.terms.source} * eps * {rule.magnitude}"
    return Tolerance(rule.max_ulps, f"{text} (the spec's rule; {rule.source})", absolute)


def dot_product_expected(
    operator: dict[str, Any], inputs: dict[str, Any], field: str = "OutputTensor"
) -> tuple[np.ndarray, Tolerance]:
    """For an operator the spec judges by the dot-product model (GEMM, CONVOLUTION): the
    FLOAT64 reference rounded to the output type, and the per-element bound the conformance
    suites apply (KS * max(bound * u, tiny) of the FLOAT64 result, plus the rounding into a
    narrower output type; `dmlspec.accuracy`), widened by the expected value's own rounding,
    so that any output within the bound of the FLOAT64 result passes. The model's error bias
    and variance statistics are the conformance suites' to judge, not the benchmark's."""
    spec = _catalog().operator(operator["type"])
    env = bind_desc(_catalog().common, spec, operator["desc"])
    data_type = str(operator["desc"][field]["DataType"])
    rule = spec.checked_semantics.comparison_for(field, "float", data_type, env)
    if rule.rule != "dot_product" or rule.terms is None:
        raise ValueError(f"{spec.name} {field} is not judged by the dot-product model")
    value, bound, _ = reference.run_exact(operator, inputs)[field]
    expected = value.astype(_catalog().common.data_type(data_type).numpy)
    terms: Any = rule.terms.evaluate(env)  # a number, as the rule's expression gives it
    allowed = allowed_error(value, bound, float(terms), data_type, accumulation_type(data_type))
    rounding = np.abs(value - expected.astype(np.float64))
    text = f"{spec.name} {field} {data_type}: KS = {rule.terms.source} (the spec's dot-product "
    text += f"bound of the FLOAT64 result, accumulating in {accumulation_type(data_type)})"
    return expected, Tolerance(0, text, allowed + rounding)


def sized(size: str, n: Scale, large: tuple[int, int], small: tuple[int, int]) -> tuple[int, int]:
    """A case's 2-D shape: `large` with its rows scaled, or `small`."""
    return (n(large[0]), large[1]) if size == "large" else small


def normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def with_flops(variants: Sequence[Variant], flops: int) -> list[Variant]:
    """The variants of a case that counts FLOPs (read in GFLOP/s), each counting `flops`."""
    return [dataclasses.replace(v, flops=flops) for v in variants]


def _flat(inputs: Sequence[Any]) -> list[np.ndarray]:
    """The arrays of positional inputs, a tensor array's items in order."""
    return [a for i in inputs for a in (i if isinstance(i, list) else [i])]


def _placed(value: Any) -> Any:
    return [device(v) for v in value] if isinstance(value, list) else device(value)


def compiled_text(function: Callable[..., Any], arguments: Sequence[Any]) -> str:
    """The optimized HLO XLA compiles `function` on these arguments into (a kernel called
    inside jax.jit runs inline, so this is the kernel's program)."""
    with jax.enable_x64(True):  # 64-bit arguments stay 64-bit while lowering
        text = jax.jit(function).lower(*arguments).compile().as_text()
    if text is None:
        raise ValueError("XLA gave no HLO text for this call")
    return text


def dmlspec_variants(
    function: Callable[..., Any],
    inputs: Sequence[Any],
    fields: dict[str, Any],
    expected: np.ndarray,
    moved: int,
    baseline: tuple[str, Callable[..., Any]],
    takes_out: bool = True,
) -> list[Variant]:
    """The three dmlspec variants of `function` (an `ops.<op>`) on positional `inputs` (a list
    for a tensor array) with keyword `fields`; the kernel's program jitted whole; and the
    plain XLA `baseline` (its name, a jax.numpy function of the same device arrays). Without
    `takes_out` (an operator of several outputs, whose function has no `out=`) there is no
    `out=` variant."""
    placed = [_placed(a) for a in inputs]
    given = Buffer(device(np.zeros_like(expected)))

    def call(*arrays: Any, out: Any = None) -> Any:
        if not takes_out:
            return function(*arrays, **fields)
        return function(*arrays, **fields, out=out)

    into = Variant(
        "jax out=",
        "dmlspec",
        IN_PLACE,
        lambda: ready(given.update(call(*placed, out=given.value))),
        moved,
    )
    return [
        Variant(
            "numpy in",
            "dmlspec",
            NEW,
            lambda: ready(call(*inputs)),
            moved,
            numpy_inputs=tuple(_flat(inputs)),
        ),
        Variant("jax", "dmlspec", NEW, lambda: ready(call(*placed)), moved),
        *([into] if takes_out else []),
        *jitted(KERNEL_JIT, f"jax.jit(ops.{function.__name__})", call, placed, expected, moved),
        *jitted(PLAIN_XLA, *baseline, placed, expected, moved),
    ]


def jitted(
    library: str,
    name: str,
    formula: Callable[..., Any],
    placed: Sequence[Any],
    expected: np.ndarray,
    moved: int,
) -> list[Variant]:
    """`formula` under one jax.jit, called on the device arrays, making a new output and, as
    dmlspec's `out=` does, writing into a donated buffer; under x64 as the kernels are (so
    64-bit results stay 64-bit). For a kernel (KERNEL_JIT) this is its compiled program with
    none of dmlspec's per-call work; for a jax.numpy formulation (PLAIN_XLA), what XLA makes of
    the operation said plainly."""
    new_output = jax.jit(formula)
    into = jax.jit(lambda out, *a: formula(*a), donate_argnums=0, keep_unused=True)
    given = Buffer(device(np.zeros_like(expected)))

    def new() -> Any:
        with jax.enable_x64(True):
            return ready(new_output(*placed))

    def donated() -> Any:
        with jax.enable_x64(True):
            return ready(given.update(into(given.value, *placed)))

    return [
        Variant(name, library, NEW, new, moved, compiled=lambda: compiled_text(formula, placed)),
        Variant(f"{name} out=", library, IN_PLACE, donated, moved),
    ]


def plain_xla_on_numpy(
    name: str, formula: Callable[..., Any], inputs: Sequence[np.ndarray], moved: int
) -> Variant:
    """Plain XLA (`formula` under one jax.jit) given the NumPy arrays themselves, a fresh
    output: the counterpart of dmlspec's "numpy in", which the convolution family's targets
    compare with (on an accelerator both copy the inputs to the device)."""
    function = jax.jit(formula)
    return Variant(
        f"{name} {ON_NUMPY_ARRAYS}",
        PLAIN_XLA,
        NEW,
        lambda: ready(function(*inputs)),
        moved,
        numpy_inputs=tuple(inputs),
    )


def is_plain_xla_on_numpy(library: str, name: str) -> bool:
    """Whether a variant (its library and name, as a Variant or the results JSON has them) is
    plain XLA given the NumPy arrays (`plain_xla_on_numpy`)."""
    return library == PLAIN_XLA and name.endswith(ON_NUMPY_ARRAYS)


def numpy_variants(
    name: str,
    new: Callable[[], Any],
    into: Callable[[np.ndarray], Any] | None,
    out: np.ndarray | None,
    moved: int,
    fetch: Fetch = np.asarray,
) -> list[Variant]:
    """NumPy's call making a fresh output, and `into(out)` writing into a given buffer (its
    `out=` form; `out` is touched here, so its pages are in)."""
    variants = [Variant(name, "numpy", NEW, new, moved, fetch)]
    if into is not None and out is not None:
        out.fill(0)
        variants.append(
            Variant(
                f"{name} out=", "numpy", IN_PLACE, lambda: into(out), moved, lambda _: fetch(out)
            )
        )
    return variants


def onnxruntime_variants(
    node: OnnxNode,
    inputs: dict[str, np.ndarray],
    expected: np.ndarray,
    moved: int,
    constants: dict[str, np.ndarray] | None = None,
    output_dtype: str | None = None,
    fetch: Fetch = first,
) -> list[Variant]:
    """A one-node onnxruntime model (none when onnxruntime is not installed). `output_dtype`:
    ONNX's output type where it differs from DirectML's (Greater's bool)."""
    return onnxruntime_peers(
        node,
        {**inputs, **(constants or {})},
        expected.shape,
        output_dtype or expected.dtype.name,
        moved,
        fetch,
        constants,
    )


TorchCalls = tuple[Callable[[], Any], Callable[[], Any] | None]


def torch_variants(
    name: str, build: Callable[[Any], TorchCalls], moved: int, fetch: Fetch = from_tensor
) -> list[Variant]:
    """torch's call and its `out=` form, each timed alone (none when torch is not installed):
    `build(torch)` makes the tensors (sharing the NumPy inputs' memory) and returns the calls."""
    torch = optional("torch")
    if torch is None:
        return []
    new, into = build(torch)
    variants = [torch_peer(name, NEW, new, moved, fetch)]
    if into is not None:
        variants.append(torch_peer(f"{name} out=", IN_PLACE, into, moved, fetch))
    return variants
