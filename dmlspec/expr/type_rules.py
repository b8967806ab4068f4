"""The static type rules of the expression functions.

A type rule takes the types of a call's arguments and gives the call's type, or raises
`TypeRuleError` naming the argument that does not fit. `fixed` builds the rule of a function
with a fixed parameter list; the others accept the variable or polymorphic argument lists of
particular functions. The registry (`functions.FUNCTIONS`) pairs each rule with an
implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .types import (
    ARRAY,
    BOOL,
    INT,
    LIST,
    MASK,
    NUMBER,
    OPERATORS,
    TENSORS,
    EnumType,
    FlagsType,
    TensorType,
    Type,
    is_assignable,
)

__all__ = [
    "DATA_TYPE",
    "DIRECTION",
    "LEVEL",
    "REDUCE_FUNCTION",
    "TypeRule",
    "TypeRuleError",
    "all_alike",
    "any_one",
    "array_and_bound",
    "fixed",
    "flags_and_member",
    "list_or_numbers",
    "one_countable",
    "pad_left_args",
    "tensors_and_tensor",
    "tensors_tensor_and_axis",
]

# The enumerations functions take arguments of.
DATA_TYPE = EnumType("DML_TENSOR_DATA_TYPE")
REDUCE_FUNCTION = EnumType("DML_REDUCE_FUNCTION")
LEVEL = EnumType("DML_FEATURE_LEVEL")
DIRECTION = EnumType("DML_RECURRENT_NETWORK_DIRECTION")


class TypeRuleError(Exception):
    """A call's arguments do not fit; `arg` is the index of the offending argument or None."""

    def __init__(self, message: str, arg: int | None = None) -> None:
        super().__init__(message)
        self.arg = arg


TypeRule = Callable[[Sequence[Type]], Type]


def fixed(*params: Type, returns: Type) -> TypeRule:
    """The rule of a function with these parameters, each argument assignable to its own."""

    def rule(args: Sequence[Type]) -> Type:
        if len(args) != len(params):
            raise TypeRuleError(f"takes {len(params)} argument(s); got {len(args)}")
        for i, (arg, param) in enumerate(zip(args, params, strict=True)):
            if not is_assignable(arg, param):
                raise TypeRuleError(f"argument {i + 1} must be {param}; got {arg}", i)
        return returns

    return rule


def list_or_numbers(args: Sequence[Type]) -> Type:
    if len(args) == 1 and args[0] == LIST:
        return INT
    if len(args) >= 2:
        for i, arg in enumerate(args):
            if not is_assignable(arg, NUMBER):
                raise TypeRuleError(f"argument {i + 1} must be int or number; got {arg}", i)
        return INT if all(arg == INT for arg in args) else NUMBER
    raise TypeRuleError("takes one list or at least two numbers")


def all_alike(args: Sequence[Type]) -> Type:
    if len(args) < 2:
        raise TypeRuleError(f"takes at least 2 arguments; got {len(args)}")
    for i, arg in enumerate(args[1:], start=1):
        if arg != args[0]:
            raise TypeRuleError(f"argument {i + 1} must be {args[0]} like argument 1; got {arg}", i)
    return BOOL


def first_of_alike(args: Sequence[Type]) -> Type:
    """At least one argument, all of one type: that type."""
    if not args:
        raise TypeRuleError("takes at least 1 argument; got 0")
    for i, arg in enumerate(args[1:], start=1):
        if arg != args[0]:
            raise TypeRuleError(f"argument {i + 1} must be {args[0]} like argument 1; got {arg}", i)
    return args[0]


def pad_left_args(args: Sequence[Type]) -> Type:
    if len(args) not in (2, 3):
        raise TypeRuleError(f"takes 2 or 3 arguments; got {len(args)}")
    return fixed(*(LIST, INT, INT)[: len(args)], returns=LIST)(args)


def flags_and_member(args: Sequence[Type]) -> Type:
    if len(args) != 2 or not isinstance(args[0], FlagsType):
        raise TypeRuleError("takes a flags value and a flag name")
    if args[1] != EnumType(args[0].enum):
        raise TypeRuleError(f"argument 2 must be a member of {args[0].enum}; got {args[1]}", 1)
    return BOOL


def array_and_bound(args: Sequence[Type]) -> Type:
    if len(args) != 2 or args[0] != ARRAY:
        raise TypeRuleError("takes an array and a bound (int, or list for the last axis)")
    if args[1] not in (INT, LIST):
        raise TypeRuleError(f"argument 2 must be int or list; got {args[1]}", 1)
    return MASK


def one_countable(args: Sequence[Type]) -> Type:
    if len(args) != 1 or args[0] not in (LIST, TENSORS, OPERATORS):
        raise TypeRuleError("takes one list, tensor array or operator-desc array")
    return INT


def any_one(args: Sequence[Type]) -> Type:
    if len(args) != 1:
        raise TypeRuleError(f"takes 1 argument; got {len(args)}")
    return BOOL


def tensors_and_tensor(args: Sequence[Type]) -> Type:
    if len(args) != 2 or args[0] != TENSORS or not isinstance(args[1], TensorType):
        raise TypeRuleError("takes a tensor array and a tensor")
    return BOOL


def tensors_tensor_and_axis(args: Sequence[Type]) -> Type:
    if len(args) != 3 or args[0] != TENSORS or not isinstance(args[1], TensorType):
        raise TypeRuleError("takes a tensor array, a tensor and an axis")
    if args[2] != INT:
        raise TypeRuleError(f"argument 3 must be int; got {args[2]}", 2)
    return BOOL
