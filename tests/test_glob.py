"""The expected-failure glob matcher: the documented wildcards, and bounded work."""

from __future__ import annotations

import fnmatch

import pytest

from dmlspec.conformance.glob import glob_matches


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("test_support_cell[*FLOAT16*]", "test_support_cell[6_2-OutputTensor-FLOAT16]", True),
        ("test_support_cell[*FLOAT16*]", "test_support_cell[6_2-OutputTensor-FLOAT32]", False),
        ("test_?", "test_a", True),
        ("test_?", "test_ab", False),
        ("*", "", True),
        ("", "x", False),
        ("a*b*c", "aXbYc", True),
        ("a*b*c", "aXbYcZ", False),
        ("[x]", "x", False),  # brackets are themselves, not a class
        ("**a", "bba", True),
    ],
)
def test_glob_matches_whole_ids_with_star_and_question_mark(
    pattern: str, text: str, matches: bool
) -> None:
    assert glob_matches(pattern, text) is matches


def test_glob_agrees_with_fnmatch_where_brackets_are_absent() -> None:
    alphabet = "ab*?"
    patterns = [""] + [a + b + c for a in alphabet for b in alphabet for c in alphabet]
    texts = ["", "a", "b", "ab", "ba", "aab", "abab", "bbb"]
    for pattern in patterns:
        for text in texts:
            expected = fnmatch.fnmatchcase(text, pattern)
            assert glob_matches(pattern, text) is expected, (pattern, text)


def test_a_pattern_that_backtracks_a_regular_expression_is_matched_in_bounded_steps() -> None:
    # "*a" 30 times then "b" against 60 "a"s: re.fullmatch takes astronomically long.
    assert glob_matches("*a" * 30 + "b", "a" * 60) is False
    assert glob_matches("*a" * 2000 + "b", "a" * 5000) is False
