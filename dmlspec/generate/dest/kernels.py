"""Emit generated/kernels/<operator>.py: the JAX kernel of one operator, from its spec.

The signature comes from the spec's fields (input tensors positional, the other fields as
keywords with the spec's kernel defaults), the static parameters and output derivations are
compiled from the spec's expressions, and the math is the primitive the spec names.
"""

from __future__ import annotations

import inspect

from ...expr import nodes
from ...expr.solve import derivations, order_derivations, references
from ...model import Catalog, Example, ExampleTensor, Field, OperatorSpec, example_field_value
from ..header import python_header
from ..pysource import WIDTH, docstring, q, snake
from .package import all_lines, import_lines, registry_entry
from .rules import RuleContext
from .validators import module_name

__all__ = ["function_name", "render_kernel", "render_kernels_api", "render_kernels_package"]

_PYTHON_TYPES = {
    "uint": "int",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "enum": "str",
    "data_type": "str",
    "scalar_union": "float",
    "uint64": "int",
    "uint_array": "list[int]",
    "int_array": "list[int]",
    "float_array": "list[float]",
    "scale_bias": "Mapping[str, float]",
    "size_2d": "Mapping[str, int]",
    "operator_desc": "Mapping[str, Any]",
    "operator_desc_array": "list[Mapping[str, Any]]",
}


def _derived_outputs(spec: OperatorSpec) -> list[tuple[str, nodes.Node]]:
    """Output tensor members the spec's equalities define from the inputs, in dependency order."""
    definitions = {d.name: d.expr.tree for d in spec.definitions}
    outputs = {f.name for f in spec.fields if f.is_output}
    members = (".Sizes", ".DataType", ".DimensionCount")
    found = [
        d
        for d in derivations(((c.id, c.expr.tree) for c in spec.constraints), definitions)
        if d.target.partition(".")[0] in outputs and d.target.endswith(members) and d.guard is None
    ]
    inputs = [f.name for f in spec.fields if not f.is_output]
    free = {f"{name}{member}" for name in inputs for member in members} | set(inputs)
    targets = {d.target for d in found}
    usable = [d for d in found if references(d.expr, definitions) <= free | targets]
    try:
        ordered = order_derivations(usable, free, definitions)
    except ValueError:  # an output that needs something only the caller knows (FILL's sizes)
        ordered = []
    return [(d.target, d.expr) for d in ordered]


def check_primitive(spec: OperatorSpec) -> None:
    """The primitive the spec names must exist and take the spec's parameters."""
    from ...kernels import primitives

    primitive = getattr(primitives, spec.checked_kernel.primitive, None)
    if primitive is None:
        known = ", ".join(primitives.__all__)
        raise ValueError(
            f"{spec.path}: kernel.primitive {spec.checked_kernel.primitive!r} is not in "
            f"dmlspec.kernels.primitives (known: {known})"
        )
    parameters = inspect.signature(primitive).parameters.values()
    kinds = {p.kind for p in parameters}
    named = {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    required = {p.name for p in parameters if p.default is p.empty and p.name in named}
    inputs = {p for p, _ in spec.checked_kernel.inputs}
    static = {p for p, _ in spec.checked_kernel.static}
    if spec.checked_kernel.function is not None:
        static.add("function")
    # A family primitive takes its inputs as *arrays and its parameters as **by-field-name.
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        inputs = set()
    wanted = inputs | static
    extra = wanted - named if inspect.Parameter.VAR_KEYWORD not in kinds else set()
    if extra or not required <= wanted:
        raise ValueError(
            f"{spec.path}: kernel parameters {sorted(wanted)} do not match "
            f"{spec.checked_kernel.primitive}{inspect.signature(primitive)}"
        )


def function_name(name: str) -> str:
    """The kernel function of an operator or alias: snake_case of its name."""
    return snake(name.removeprefix("DML_OPERATOR_")).replace("__", "_")


def render_kernel(catalog: Catalog, spec: OperatorSpec) -> str:
    check_primitive(spec)
    context = RuleContext("d", frozenset(f.name for f in spec.fields), catalog.common.enum_infos())
    kernel = spec.checked_kernel
    function = function_name(spec.name)
    inputs = [f for f in spec.fields if (f.is_tensor or f.is_tensor_array) and not f.is_output]
    derived = _derived_outputs(spec)
    derived_targets = {target for target, _ in derived}
    # An output whose DataType or Sizes the spec cannot derive is described by the caller (CAST's
    # output type, a comparison's UINT8 or UINT32): the derivable members may be left out. An
    # optional one is the caller's to ask for even where derivable (RNN's outputs: {} derives
    # its desc, None leaves it out).
    required_outputs = [
        f
        for f in spec.fields
        if f.is_output
        and (f.optional or not {f"{f.name}.DataType", f"{f.name}.Sizes"} <= derived_targets)
    ]
    defaults = dict(kernel.defaults)
    scalars = [f for f in spec.fields if not (f.is_tensor or f.is_tensor_array)]
    outputs = [spec.field(name) for name in kernel.outputs]
    lone = len(outputs) == 1 and not outputs[0].is_tensor_array  # `out=` applies
    lines = python_header([spec.path]).splitlines()
    lines += docstring(
        f"JAX kernel for {' or '.join(spec.operator_types)}, generated from its spec; the math "
        f"is dmlspec.kernels.primitives.{kernel.primitive}.",
        0,
    )
    lines += [
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Mapping"
        + (", Sequence" if any(f.is_tensor_array for f in inputs) else ""),
        "from typing import Any",
        "",
        "import jax",
        *(["from numpy.typing import ArrayLike"] if inputs else []),
        "",
        "from dmlspec.kernels import primitives",
        "from dmlspec.kernels.runtime import KernelTable, call_kernel, run_operator",
        "from dmlspec.validation.runtime import View",
        "",
        *sorted(
            [
                "from ..validators import common",
                f"from ..validators import {module_name(spec)} as validator",
            ],
            key=lambda line: line.split()[3],
        ),
        *(["from ..validators.common import fn"] if _uses_fn(spec) else []),
        "",
        "__all__ = [" + ", ".join(q(n) for n in sorted(["KERNEL", function, "run"])) + "]",
    ]
    static_names = [p for p, _ in kernel.static]
    if kernel.function is not None:
        static_names.insert(0, "function")
        lines += ["", "", "def _static_function(d: View) -> Any:"]
        lines += [f"    return {q(kernel.function)}"]
    for parameter, expression in kernel.static:
        lines += ["", "", f"def _static_{parameter}(d: View) -> Any:"]
        lines += _return(context.python(expression.tree), context, expression.tree)
    for name, expression in defaults.items():
        lines += ["", "", f"def _default_{snake(name)}(d: View) -> Any:"]
        lines += _return(context.python(expression.tree), context, expression.tree)
    for target, tree in derived:
        lines += ["", "", f"def _derive_{snake(target.replace('.', '_'))}(d: View) -> Any:"]
        lines += _return(context.python(tree), context, tree)
    lines += [
        "",
        "",
        "KERNEL = KernelTable(",
        f"    name={q(spec.name)},",
        f"    operator_type={q(spec.operator_type)},",
        "    validator=validator,",
        "    common=common.COMMON,",
        f"    primitive=primitives.{kernel.primitive},",
        f"    inputs=({''.join(f'({q(p)}, {q(n)}), ' for p, n in kernel.inputs).rstrip(' ')}),",
        *_tuple_field("static", [f"({q(p)}, _static_{p})" for p in static_names]),
        *_tuple_field("defaults", [f"({q(n)}, _default_{snake(n)})" for n in defaults]),
        *_tuple_field(
            "derived", [f"({q(t)}, _derive_{snake(t.replace('.', '_'))})" for t, _ in derived]
        ),
        f"    outputs=({''.join(f'{q(n)}, ' for n in kernel.outputs).rstrip(' ')}),",
        f"    donate={q(kernel.donate) if kernel.donate else None},",
        *(
            [f"    tensor_arrays=({''.join(f'{q(f.name)}, ' for f in arrays).rstrip(' ')}),"]
            if (arrays := [f for f in inputs if f.is_tensor_array])
            else []
        ),
        ")",
        "",
        "",
    ]
    parameters = [f"    {f.name}: {_array_type(f)}," for f in inputs if not f.optional]
    keywords = [f"    {f.name}: {_array_type(f)} | None = None," for f in inputs if f.optional]
    keywords += [
        f"    {f.name}: {'list[Mapping[str, Any]]' if f.is_tensor_array else 'Mapping[str, Any]'},"
        for f in required_outputs
    ]
    keywords += [f"    {f.name}: {_PYTHON_TYPES[f.kind]} | None = None," for f in scalars]
    keywords.append("    feature_level: str | None = None,")
    if kernel.donate:
        keywords.append("    donate: bool = False,")
    if lone:
        keywords.append("    out: jax.Array | None = None,")
    lines.append(f"def {function}(")
    lines += parameters
    lines.append("    *,")
    lines += keywords
    lines.append(f") -> {_return_type(outputs)}:")
    lines += docstring(_function_doc(catalog, spec, inputs, scalars, required_outputs), 4)
    lines += [f"    result: {_return_type(outputs)} = call_kernel(", "        KERNEL,"]
    for group in (inputs, scalars, required_outputs):
        lines += _dict_lines([f"{q(f.name)}: {f.name}" for f in group], 8)
    lines += [
        "        feature_level,",
        f"        {'donate' if kernel.donate else 'False'},",
        f"        {'out' if lone else 'None'},",
        "    )",
        "    return result",
        "",
        "",
        "def run(",
        "    operator: Mapping[str, Any],",
        "    inputs: Mapping[str, Any],",
        "    feature_level: str | None = None,",
        ") -> dict[str, Any]:",
        *docstring(
            "Run operator JSON (the backend contract): inputs and outputs keyed by tensor field.", 4
        ),
        "    return run_operator(KERNEL, operator, inputs, feature_level)",
    ]
    return "\n".join(lines) + "\n"


def _array_type(field: Field) -> str:
    return "Sequence[ArrayLike]" if field.is_tensor_array else "ArrayLike"


def _return_type(outputs: list[Field]) -> str:
    """jax.Array for one output tensor, a list for a tensor array, a tuple for several."""
    types = ["list[jax.Array]" if f.is_tensor_array else "jax.Array" for f in outputs]
    if len(types) == 1:
        return types[0]
    marked = [f"{t} | None" if f.optional else t for f, t in zip(outputs, types, strict=True)]
    return f"tuple[{', '.join(marked)}]"


def _uses_fn(spec: OperatorSpec) -> bool:
    trees = [e.tree for _, e in spec.checked_kernel.static] + [
        e.tree for _, e in spec.checked_kernel.defaults
    ]
    trees += [tree for _, tree in _derived_outputs(spec)]
    return any(isinstance(n, nodes.Call) for tree in trees for n in nodes.walk(tree))


def _return(text: str, context: RuleContext, tree: nodes.Node) -> list[str]:
    single = f"    return {text}"
    if len(single) <= WIDTH:
        return [single]
    return ["    return (", *context.python_lines(tree, 8), "    )"]


def _tuple_field(keyword: str, items: list[str]) -> list[str]:
    if not items:
        return [f"    {keyword}=(),"]
    return [f"    {keyword}=(", *[f"        {item}," for item in items], "    ),"]


def _dict_lines(entries: list[str], indent: int) -> list[str]:
    """A dict literal argument (with its trailing comma), one entry per line if it is long."""
    pad = " " * indent
    single = f"{pad}{{{', '.join(entries)}}},"
    if len(single) <= WIDTH:
        return [single]
    return [f"{pad}{{", *[f"{pad}    {entry}," for entry in entries], f"{pad}}},"]


def _first_sentence(text: str) -> str:
    sentence = " ".join(text.split()).split(". ")[0].rstrip(".")
    return sentence + "."


def _function_doc(
    catalog: Catalog,
    spec: OperatorSpec,
    inputs: list[Field],
    scalars: list[Field],
    required_outputs: list[Field],
) -> str:
    derived = _derived_outputs(spec)
    kernel = spec.checked_kernel
    defaults = dict(kernel.defaults)
    pseudocode = "\n".join(
        f"    {line}".rstrip() for line in spec.checked_semantics.pseudocode.splitlines()
    )
    parts = [spec.summary, pseudocode]
    parts.append(
        "Input tensors are arrays shaped and typed as their descs: "
        + " ".join(f"{f.name}: {_first_sentence(f.doc)}" for f in inputs)
    )
    for field in required_outputs:
        members = [
            m for m in ("DataType", "Sizes") if f"{field.name}.{m}" not in {t for t, _ in derived}
        ]
        described = (
            " ({} derives both; None leaves it out)."
            if not members
            else f" (its {' and '.join(members)} at least)."
            if len(members) < 2
            else "."
        )
        parts.append(
            f"{field.name}: the output desc, {{'DataType': ..., 'Sizes': [...]}}" + described
        )
    parts.append(
        " ".join(
            f"{f.name}: {_first_sentence(f.doc)}"
            + (f" Default: {defaults[f.name].source}." if f.name in defaults else "")
            for f in scalars
        )
    )
    parts.append(
        "feature_level: validate against this DirectML feature level (default: the highest). "
        "An invalid desc raises dmlspec.InvalidOperator naming the constraint ids."
        + (
            f" donate=True lets the kernel reuse the buffer of {kernel.donate} (do not use that "
            "array afterwards)."
            if kernel.donate
            else ""
        )
        + (
            f" out: a jax.Array shaped and typed like {kernel.output}, whose buffer the result is"
            " written into (it is donated: do not use it afterwards); repeated calls then reuse"
            " one buffer instead of allocating and page-faulting a fresh output each time."
            if len(kernel.outputs) == 1 and not spec.field(kernel.output).is_tensor_array
            else " Returns "
            + ", ".join(
                f"{name}{' (a list)' if spec.field(name).is_tensor_array else ''}"
                for name in kernel.outputs
            )
            + (", in this order." if len(kernel.outputs) > 1 else ".")
        )
    )
    example = _example(catalog, spec)
    if example is not None:
        parts.append(example)
    return "\n\n".join(p for p in parts if p)


def _example(catalog: Catalog, spec: OperatorSpec) -> str | None:
    for example in spec.checked_examples:
        fields = example.valid_form.as_dict()
        output = fields[spec.checked_kernel.output]
        assert isinstance(output, ExampleTensor)  # checked_examples print the output tensor
        args = []
        for name, value in fields.items():
            if name == spec.checked_kernel.output:
                continue
            if isinstance(value, ExampleTensor):
                dtype = catalog.common.data_type(value.data_type or "").numpy
                args.append(f"{name}=np.array({_plain(value.values)}, np.{dtype})")
            else:
                args.append(f"{name}={example_field_value(spec.field(name), value)!r}")
        return (
            f"Example ({_title(example)}): called with "
            + ", ".join(args)
            + f", it returns {_plain(output.values)}."
        )
    return None


def _title(example: Example) -> str:
    return example.title or f"the documented example {example.id!r}"


def _plain(values: object) -> str:
    if isinstance(values, tuple):
        return "[" + ", ".join(_plain(v) for v in values) + "]"
    return repr(values)


def render_kernels_package(catalog: Catalog) -> str:
    modules = sorted(module_name(spec) for spec in catalog.with_kernels)
    lines = python_header(sorted(spec.path for spec in catalog.with_kernels)).splitlines()
    lines += docstring(
        "Generated JAX kernels, one module per operator; KERNELS maps every DML_OPERATOR_* name "
        "(aliases included) to its module.",
        0,
    )
    lines += ["", "from __future__ import annotations", "", "from types import ModuleType", ""]
    lines += import_lines(modules)
    lines += ["", "KERNELS: dict[str, ModuleType] = {"]
    for spec in sorted(catalog.with_kernels, key=lambda s: s.name):
        for operator_type in spec.operator_types:
            lines += registry_entry(operator_type, module_name(spec))
    lines += ["}", "", *all_lines(["KERNELS", *modules])]
    return "\n".join(lines) + "\n"


def render_kernels_api(catalog: Catalog) -> str:
    """generated/kernels/api.py: every kernel function (and one per alias) by its name, for
    `dmlspec.ops` to re-export."""
    specs = sorted(catalog.with_kernels, key=lambda s: s.name)
    lines = python_header(sorted(spec.path for spec in specs)).splitlines()
    lines += docstring(
        "Every generated kernel function, named as its operator in snake_case; an alias "
        "(DML_OPERATOR_SCATTER) names the same function.",
        0,
    )
    lines += ["", "from __future__ import annotations", ""]
    names = []
    for spec in sorted(specs, key=module_name):
        function = function_name(spec.name)
        lines.append(f"from .{module_name(spec)} import {function}")
        names.append(function)
    aliases = []
    for spec in specs:
        for alias in spec.aliases:
            aliases.append(f"{function_name(alias.operator_type)} = {function_name(spec.name)}")
            names.append(function_name(alias.operator_type))
    if aliases:
        lines += ["", *aliases]
    lines += ["", *all_lines(sorted(names))]
    return "\n".join(lines) + "\n"
