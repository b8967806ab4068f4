"""Parse the code block of a documented example: the tensors it declares
(``Name: (Sizes:{...}, DataType:TYPE)`` and the bracketed values that follow) and its scalar
fields (``Name: value``), located by line so an error points into the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .read import DocPageError

__all__ = ["ExampleTensorText", "ParsedExample", "parse_example_code"]


@dataclass(frozen=True)
class ExampleTensorText:
    """A tensor written in an example: ``Name: (Sizes:{...}, DataType:TYPE)`` and its values."""

    name: str
    sizes: tuple[int, ...]
    data_type: str
    values: object  # nested tuples of int and float as written; None when no values follow
    line_offset: int  # 0-based line of the declaration within the code block


@dataclass(frozen=True)
class ParsedExample:
    """The tensors and scalar fields of one example code block, in order."""

    tensors: tuple[ExampleTensorText, ...]
    scalars: tuple[tuple[str, str], ...]  # (name, raw value text)


_DECLARATION = re.compile(
    r"^(?P<name>\w+(?:\[\d+\])?)\s*:\s*\(\s*Sizes\s*:\s*\{(?P<sizes>[^}]*)\}\s*,?"
    r"\s*DataType\s*:\s*(?P<type>\w+)\s*\)(?P<rest>.*)$"
)
_DECLARATION_START = re.compile(r"^\w+(?:\[\d+\])?\s*:\s*\(")
_SCALAR = re.compile(r"^(?P<name>\w+)\s*[:=]\s*(?P<value>\S.*)$")
_VALUE_TOKEN = re.compile(r"\[|\]|,|[^\s\[\],]+")
_INTEGER = re.compile(r"^[-+]?\d+$")
_DECIMAL = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[fF]?$")  # 1.5, 0., 13.0f


def parse_example_code(
    code: str, *, where: str = "<example>", first_line: int = 1
) -> ParsedExample:
    """The tensors and scalar fields written in an example code block.

    ``Name: (Sizes:{...}, DataType:TYPE)`` declares a tensor whose values, if any, are the
    bracketed literal that follows (on the same line or the next ones). ``Name: value`` and
    ``Name = value`` are scalar fields. ``//`` comments are ignored, and so are lines of other
    shapes (worked formulas such as ``Output[0,0] = ...``). Errors are located at
    ``where:first_line + offset``; pass the page path and `ExampleBlock.line` to point into
    the page.
    """
    lines = [line.split("//")[0].rstrip() for line in code.split("\n")]
    return _ExampleReader(lines, where, first_line).read()


@dataclass(frozen=True)
class _ExampleReader:
    lines: list[str]  # comments removed
    where: str
    first_line: int

    def error(self, offset: int, message: str) -> DocPageError:
        return DocPageError(self.where, self.first_line + offset, message)

    def read(self) -> ParsedExample:
        tensors: list[ExampleTensorText] = []
        scalars: list[tuple[str, str]] = []
        offset = 0
        while offset < len(self.lines):
            text = self.lines[offset].strip()
            declaration = _DECLARATION.match(text)
            if declaration:
                tensor, offset = self.tensor(declaration, offset)
                tensors.append(tensor)
                continue
            if _DECLARATION_START.match(text):
                raise self.error(
                    offset, f"expected 'Name: (Sizes:{{...}}, DataType:TYPE)', found {text!r}"
                )
            if text.startswith("["):
                raise self.error(offset, f"expected a tensor declaration before {text!r}")
            scalar = _SCALAR.match(text)
            if scalar:
                scalars.append((scalar["name"], scalar["value"].strip()))
            offset += 1
        return ParsedExample(tuple(tensors), tuple(scalars))

    def tensor(self, declaration: re.Match[str], offset: int) -> tuple[ExampleTensorText, int]:
        """The declared tensor and the offset of the line after its values."""
        sizes = self.sizes(declaration["sizes"], offset)
        start = self.values_start(declaration["rest"], offset)
        values, after = self.literal(*start) if start else (None, offset + 1)
        tensor = ExampleTensorText(declaration["name"], sizes, declaration["type"], values, offset)
        return tensor, after

    def values_start(self, rest: str, offset: int) -> tuple[int, str] | None:
        """Where the values begin: after the declaration on its line, or on the next line."""
        if rest.strip():
            return offset, rest
        following = self.next_nonblank(offset + 1)
        if following is not None and self.lines[following].lstrip().startswith("["):
            return following, self.lines[following]
        return None

    def sizes(self, text: str, offset: int) -> tuple[int, ...]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not all(_INTEGER.match(part) for part in parts):
            raise self.error(offset, f"expected Sizes like {{1, 2, 3}}, found {{{text}}}")
        return tuple(int(part) for part in parts)

    def next_nonblank(self, offset: int) -> int | None:
        return next((i for i in range(offset, len(self.lines)) if self.lines[i].strip()), None)

    def literal(self, offset: int, first_text: str) -> tuple[object, int]:
        """The bracketed literal starting with `first_text` on line `offset` and running until
        its brackets balance, and the offset of the line after it."""
        stack: list[list[object]] = []
        for index in range(offset, len(self.lines)):
            tokens = _VALUE_TOKEN.findall(first_text if index == offset else self.lines[index])
            for position, token in enumerate(tokens):
                if token == "[":
                    stack.append([])
                elif not stack:
                    raise self.error(index, f"expected '[' to start the values, found {token!r}")
                elif token == "]":
                    done = tuple(stack.pop())
                    if not stack:
                        self.expect_line_end(index, tokens[position + 1 :])
                        return done, index + 1
                    stack[-1].append(done)
                elif token != ",":
                    stack[-1].append(self.number(token, index))
        raise self.error(offset, "expected ']' to close these values, found the end of the example")

    def expect_line_end(self, offset: int, leftover: list[str]) -> None:
        if leftover:
            found = " ".join(leftover)
            raise self.error(
                offset, f"expected the end of the line after the values, found {found!r}"
            )

    def number(self, token: str, offset: int) -> int | float:
        if _INTEGER.match(token):
            return int(token)
        decimal = _DECIMAL.match(token)
        if decimal:
            return float(decimal[1])
        raise self.error(offset, f"expected a number in the values, found {token!r}")
