"""Glob matching of test ids for expected failures: `*` any run of characters, `?` any one,
everything else itself (test ids are full of `[` and `]`).

The two-pointer match backs up only to the latest `*`, so it takes at most
len(pattern) * len(text) steps: a regular expression built from the pattern backtracked
exponentially on patterns such as `*a*a*a*a*...b`, which a backend's list may hold.
"""

from __future__ import annotations

__all__ = ["glob_matches"]


def glob_matches(pattern: str, text: str) -> bool:
    """Whether `pattern` matches the whole of `text`."""
    p = t = 0
    star, resume = -1, 0  # the latest `*` in the pattern, and where in text it next resumes
    while t < len(text):
        if p < len(pattern) and pattern[p] in ("?", text[t]) and pattern[p] != "*":
            p, t = p + 1, t + 1
        elif p < len(pattern) and pattern[p] == "*":
            star, resume = p, t
            p += 1
        elif star >= 0:
            resume += 1
            p, t = star + 1, resume
        else:
            return False
    return all(c == "*" for c in pattern[p:])
