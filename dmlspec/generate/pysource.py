"""Small helpers for writing Python source text: string literals, docstrings, names."""

from __future__ import annotations

import json
import re
import textwrap

__all__ = ["WIDTH", "call_lines", "docstring", "q", "snake", "string_lines"]

WIDTH = 100


def q(value: object) -> str:
    """A Python literal for a str (double-quoted), tuple of str, or other simple value."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        inner = ", ".join(q(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def snake(name: str) -> str:
    """IndexTupleSize -> index_tuple_size."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def string_lines(text: str, indent: int, suffix: str = "") -> list[str]:
    """A string literal (plus `suffix`), split into adjacent literals to fit the width.

    More than one line comes back wrapped in parentheses."""
    pad = " " * indent
    single = f"{pad}{q(text)}{suffix}"
    if len(single) <= WIDTH:
        return [single]
    room = WIDTH - indent - 6
    chunks = textwrap.wrap(text, room, drop_whitespace=False, break_long_words=True)
    lines = [f"{pad}    {q(chunk)}" for chunk in chunks]
    return [f"{pad}(", *lines, f"{pad}){suffix}"]


def docstring(text: str, indent: int) -> list[str]:
    """A triple-quoted docstring wrapped to the width."""
    pad = " " * indent
    clean = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    paragraphs = [p for p in clean.split("\n\n") if p.strip()]
    wrapped = [
        # Paragraphs indented by four spaces (code) are kept line for line.
        p.splitlines()
        if all(line.startswith("    ") for line in p.splitlines())
        else textwrap.wrap(" ".join(p.split()), WIDTH - indent - 3)
        for p in paragraphs
    ]
    if len(wrapped) == 1 and len(wrapped[0]) == 1 and len(pad) + len(wrapped[0][0]) + 6 <= WIDTH:
        return [f'{pad}"""{wrapped[0][0]}"""']
    lines = [f'{pad}"""{wrapped[0][0]}']
    for line in wrapped[0][1:]:
        lines.append(pad + line)
    for paragraph in wrapped[1:]:
        lines.append("")
        lines.extend(pad + line for line in paragraph)
    lines.append(f'{pad}"""')
    return lines


def call_lines(callee: str, arguments: list[str], indent: int, suffix: str = ",") -> list[str]:
    """`callee(a, b)` on one line if it fits, else one argument per line."""
    pad = " " * indent
    single = f"{pad}{callee}({', '.join(arguments)}){suffix}"
    if len(single) <= WIDTH:
        return [single]
    return [f"{pad}{callee}(", *[f"{pad}    {a}," for a in arguments], f"{pad}){suffix}"]
