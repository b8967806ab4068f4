"""Rendering expression trees as Python keeps their meaning (precedence, chaining, slices)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dmlspec.expr import EnumInfo, Environment, Scope, compile_expression
from dmlspec.expr.pycode import to_python
from dmlspec.expr.types import INT, LIST
from dmlspec.model import Catalog

SCOPE = Scope({"a": INT, "b": INT, "c": INT, "xs": LIST})


class Facts:
    def element_bits(self, data_type: str) -> int:
        return 8

    def numpy_dtype(self, data_type: str) -> str | None:
        return None


def int_expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        st.sampled_from(["a", "b", "c", "len(xs)", "xs[0]", "xs[-1]"]),
        st.integers(-5, 5).map(str),
    )

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        )
        negated = children.map(lambda e: f"-({e})")
        return st.one_of(binary, negated)

    return st.recursive(leaves, extend, max_leaves=8)


def bool_expressions() -> st.SearchStrategy[str]:
    comparison = st.tuples(
        int_expressions(), st.sampled_from(["<", "<=", "==", "!="]), int_expressions()
    ).map(lambda t: f"({t[0]} {t[1]} {t[2]})")

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        both = st.tuples(children, st.sampled_from(["and", "or"]), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        )
        return st.one_of(both, children.map(lambda e: f"(not {e})"))

    return st.recursive(comparison, extend, max_leaves=6)


def evaluate(source: str, values: dict[str, object]) -> object:
    return compile_expression(source, SCOPE).evaluate(Environment(dict(values), Facts(), {}))


@settings(max_examples=300, deadline=None)
@given(
    source=st.one_of(int_expressions(), bool_expressions()),
    a=st.integers(-9, 9),
    b=st.integers(-9, 9),
    c=st.integers(-9, 9),
    xs=st.lists(st.integers(-9, 9), min_size=1, max_size=4),
)
def test_rendered_python_means_the_same(source: str, a: int, b: int, c: int, xs: list[int]) -> None:
    values = {"a": a, "b": b, "c": c, "xs": xs}
    tree = compile_expression(source, SCOPE).tree
    rendered = to_python(tree, str, str, {})
    assert evaluate(rendered, values) == evaluate(source, values)
    assert rendered.count("(") <= source.count("(")  # no parentheses added


def test_spec_constraints_render_without_redundant_parentheses(catalog: Catalog) -> None:
    rendered = {
        c.id: to_python(
            c.expr.tree, lambda n: f"d.{n}", lambda f: f"fn.{f}", catalog.common.enum_infos()
        )
        for c in catalog.operator("SCATTER_ELEMENTS").constraints
    }
    assert rendered["SCATTER_ELEMENTS.C3"] == (
        "d.IndicesTensor.Sizes[:d.Axis] + d.IndicesTensor.Sizes[d.Axis + 1:] == "
        "d.InputTensor.Sizes[:d.Axis] + d.InputTensor.Sizes[d.Axis + 1:]"
    )
    assert rendered["SCATTER_ELEMENTS.C6"] == "0 <= d.Axis < d.OutputTensor.DimensionCount"
    tensor_rules = {
        c.id: to_python(c.expr.tree, str, lambda f: f"fn.{f}", catalog.common.enum_infos())
        for c in catalog.common.tensor_constraints
    }
    assert (
        tensor_rules["TENSOR.C9"]
        == 'not fn.has_flag(T.Flags, "OWNED_BY_DML") or TensorKind == "INPUT"'
    )


def test_enum_literals_are_rendered_short() -> None:
    enums = {"DT": EnumInfo("DT", "DML_TENSOR_DATA_TYPE_", ("FLOAT32",))}
    scope = Scope(
        {"t": __import__("dmlspec.expr.types", fromlist=["EnumType"]).EnumType("DT")}, enums
    )
    tree = compile_expression('t == "DML_TENSOR_DATA_TYPE_FLOAT32"', scope).tree
    assert to_python(tree, str, str, enums) == 't == "FLOAT32"'
