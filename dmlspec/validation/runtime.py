"""What generated rule functions use at run time: attribute views and the function library."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..expr import Absent
from ..expr.facts import Facts
from ..expr.functions import FUNCTIONS

__all__ = ["Functions", "TensorView", "View"]


class View:
    """A desc's values as attributes (`d.InputTensor`, `d.Axis`); named definitions are computed
    on first use. Reading a value that is not there raises `Absent`, so the rule does not apply."""

    __slots__ = ("_cache", "_definitions", "_values")

    def __init__(
        self,
        values: Mapping[str, Any],
        definitions: Mapping[str, Callable[[View], Any]] | None = None,
    ) -> None:
        self._values = dict(values)
        self._definitions = definitions or {}
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        if name in self._cache:
            return self._cache[name]
        if name in self._definitions:
            self._cache[name] = self._definitions[name](self)
            return self._cache[name]
        raise Absent(name)


class TensorView:
    """A tensor desc's members as attributes (`T.Sizes`); absent optional members raise `Absent`."""

    __slots__ = ("_members", "_name")

    def __init__(self, name: str, members: Mapping[str, Any]) -> None:
        self._name = name
        self._members = dict(members)

    @property
    def members(self) -> dict[str, Any]:
        return self._members

    @property
    def label(self) -> str:
        """The field it was read from: `InputTensor`, or `InputTensors[1]` in an array."""
        return self._name

    def __getattr__(self, member: str) -> Any:
        try:
            return self._members[member]
        except KeyError:
            raise Absent(f"{self._name}.{member}") from None


class Functions:
    """`fn.pad_left(...)` in generated code: the library functions, bound to the DirectML facts."""

    def __init__(self, facts: Facts) -> None:
        self._facts = facts

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in FUNCTIONS:
            raise AttributeError(name)
        return functools.partial(FUNCTIONS[name].impl, self._facts)
