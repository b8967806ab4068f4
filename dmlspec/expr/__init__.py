"""The constraint-expression language of dmlspec specs.

A small, typed, side-effect-free language (a subset of Python syntax) for constraints such as
`IndicesTensor.Sizes[-1] <= InputDimensionCount`. It is parsed without eval/exec
(`parse.py`), type-checked when specs load (`check.py`), evaluated against descs and tensor
data (`evaluate.py`), and read backwards to derive dependent values (`solve.py`).
See docs/spec-format.md for the language reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import nodes
from .check import EnumInfo, Scope, check
from .errors import Absent, ExpressionError
from .evaluate import Environment, TensorValue, evaluate
from .facts import Facts
from .functions import FUNCTIONS
from .parse import parse
from .types import Type

__all__ = [
    "FUNCTIONS",
    "Absent",
    "EnumInfo",
    "Environment",
    "Expression",
    "ExpressionError",
    "Facts",
    "Scope",
    "TensorValue",
    "compile_expression",
]


@dataclass(frozen=True)
class Expression:
    """An expression's source text with its parsed tree and static type.

    Equality and hashing use the source text only, so a model rebuilt from its own JSON
    compares equal.
    """

    source: str
    tree: nodes.Node = field(compare=False, repr=False)
    type: Type = field(compare=False, repr=False)

    def evaluate(self, env: Environment) -> object:
        return evaluate(self.tree, env, self.source)


def compile_expression(source: str, scope: Scope) -> Expression:
    """Parse and type-check; raises `ExpressionError`."""
    tree = parse(source)
    return Expression(source, tree, check(tree, scope, source.strip()))
