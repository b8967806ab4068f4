"""Baselines: a build's expected failures and known flakes as data, in a JSON or TOML file that
travels with the build (`--baseline FILE`), rather than as Python in a backend.

    {"expected_failures": [{"pattern": "test_support_cell[*FLOAT16]", "reason": "...",
                            "operator": "GATHER_ND", "backend": "onnxruntime*",
                            "providers": ["DmlExecutionProvider"]}],
     "flaky": [{"pattern": "test_random_valid_case", "reason": "...", "operator": "..."}]}

`pattern` matches the test part of a case id (after `::`; * and ? are the only wildcards),
`operator` limits an entry to that operator's suite, `backend` (a pattern) to the backends so
named, `providers` to onnxruntime backends on those execution providers. A case an expected
failure matches is marked xfail (a pass is reported as stale); a known flake's failure is
reported as flaky and fails nothing. `--write-baseline FILE` writes one from a run's results.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..limits import quote

__all__ = ["Baseline", "BaselineEntry", "BaselineError", "baseline_from_results", "matches"]

_KEYS = ("pattern", "reason", "operator", "backend", "providers")
_SECTIONS = ("expected_failures", "flaky")


class BaselineError(ValueError):
    """A baseline file that cannot be read, or an entry that breaks the format."""


def matches(pattern: str, text: str) -> bool:
    """Glob match where only * and ? are wildcards: case ids are full of [ and ]."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, text) is not None


@dataclass(frozen=True)
class BaselineEntry:
    """One expected failure or known flake."""

    pattern: str
    reason: str
    operator: str | None = None
    backend: str | None = None
    providers: tuple[str, ...] = ()

    def applies_to(self, backend: str, provider: str | None) -> bool:
        if self.backend is not None and not matches(self.backend, backend):
            return False
        return not self.providers or provider in self.providers

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"pattern": self.pattern, "reason": self.reason}
        if self.operator is not None:
            entry["operator"] = self.operator
        if self.backend is not None:
            entry["backend"] = self.backend
        if self.providers:
            entry["providers"] = list(self.providers)
        return entry


@dataclass(frozen=True)
class Baseline:
    """Expected failures and known flakes, read from `source`."""

    expected_failures: tuple[BaselineEntry, ...] = ()
    flaky: tuple[BaselineEntry, ...] = ()
    source: str = field(default="", compare=False)

    @staticmethod
    def read(path: Path, operators: Collection[str] | None = None) -> Baseline:
        """The baseline in `path` (TOML if it ends in .toml, else JSON); `operators`, when
        given, are the names an entry's `operator` may take."""
        where = f"--baseline {path}"
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            raise BaselineError(f"{where}: cannot read it ({reason})") from None
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
            raise BaselineError(f"{where}: not valid {_format(path).upper()} ({error})") from None
        if not isinstance(data, dict):
            raise BaselineError(f"{where}: expected an object with {_SECTIONS}; got {quote(data)}")
        leftover = sorted(set(data) - {"about", *_SECTIONS})
        if leftover:
            raise BaselineError(
                f"{where}: unknown key {quote(leftover[0])} (allowed: about, "
                f"{', '.join(_SECTIONS)})"
            )
        sections = {
            name: tuple(
                _entry(f"{where} at /{name}/{i}", e, operators)
                for i, e in enumerate(_list(where, name, data.get(name, [])))
            )
            for name in _SECTIONS
        }
        return Baseline(sections["expected_failures"], sections["flaky"], str(path))

    def for_backend(self, backend: str, provider: str | None) -> Baseline:
        """The entries that apply to this backend (and execution provider, if it has one)."""
        return Baseline(
            tuple(e for e in self.expected_failures if e.applies_to(backend, provider)),
            tuple(e for e in self.flaky if e.applies_to(backend, provider)),
            self.source,
        )

    def render(self, path: Path) -> str:
        """The baseline as the file `path` holds it: TOML if it ends in .toml, else JSON."""
        about = "Expected failures and known flakes of a conformance run (dmlspec --baseline)."
        sections = {
            "expected_failures": [e.to_json() for e in self.expected_failures],
            "flaky": [e.to_json() for e in self.flaky],
        }
        if _format(path) == "json":
            return json.dumps({"about": about, **sections}, indent=2, ensure_ascii=False) + "\n"
        lines = [f"about = {_toml(about)}"]
        for name, entries in sections.items():
            for entry in entries:
                lines += ["", f"[[{name}]]"]
                lines += [f"{key} = {_toml(value)}" for key, value in entry.items()]
        return "\n".join(lines) + "\n"


def _format(path: Path) -> str:
    return "toml" if path.suffix == ".toml" else "json"


def _toml(value: object) -> str:
    # A JSON string is a TOML basic string: the same escapes, \uXXXX for control characters.
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _list(where: str, name: str, value: object) -> list[object]:
    if not isinstance(value, list):
        raise BaselineError(f"{where} at /{name}: expected a list of entries; got {quote(value)}")
    return value


def _entry(where: str, raw: object, operators: Collection[str] | None) -> BaselineEntry:
    if not isinstance(raw, dict):
        raise BaselineError(f"{where}: expected an entry object; got {quote(raw)}")
    leftover = sorted(set(raw) - set(_KEYS))
    if leftover:
        raise BaselineError(
            f"{where}: unknown key {quote(leftover[0])} (allowed: {', '.join(_KEYS)})"
        )
    for key in ("pattern", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise BaselineError(
                f"{where}/{key}: required, a non-empty string; got {quote(raw.get(key))}"
            )
    for key in ("operator", "backend"):
        if key in raw and not isinstance(raw[key], str):
            raise BaselineError(f"{where}/{key}: must be a string; got {quote(raw[key])}")
    providers = raw.get("providers", [])
    if not isinstance(providers, list) or not all(isinstance(p, str) for p in providers):
        raise BaselineError(f"{where}/providers: must be a list of strings; got {quote(providers)}")
    operator = raw.get("operator")
    if operator is not None:
        operator = operator.upper().removeprefix("DML_OPERATOR_")
        if operators is not None and operator not in operators:
            raise BaselineError(f"{where}/operator: unknown operator {quote(raw['operator'])}")
    return BaselineEntry(
        raw["pattern"], raw["reason"], operator, raw.get("backend"), tuple(providers)
    )


def baseline_from_results(results: Mapping[str, Any]) -> Baseline:
    """A baseline naming each case a run's results.json records as failed (an expected failure
    for the run's backend, its message as the reason), as flaky (a known flake), or as an
    expected failure a baseline listed (that entry, kept)."""
    backend = str(results["backend"])
    expected: dict[tuple[str | None, str], BaselineEntry] = {}
    flaky: dict[tuple[str | None, str], BaselineEntry] = {}
    listed = results.get("expected_failures", [])
    for test in sorted(results["tests"], key=lambda t: str(t["nodeid"])):
        pattern = str(test["nodeid"]).split("::", 1)[-1]
        reason = str(test.get("message") or "").strip() or "failed (no message)"
        key = (test.get("operator"), pattern)
        entry = BaselineEntry(pattern, reason, test.get("operator"), backend)
        if test["outcome"] == "failed":
            expected.setdefault(key, entry)
        elif test["outcome"] == "flaky":
            flaky.setdefault(key, entry)
        elif test["outcome"] == "xfailed" and isinstance(test.get("expected"), int):
            kept = listed[test["expected"]]
            if kept.get("source", "backend") != "backend":
                expected.setdefault(
                    (kept.get("operator"), kept["pattern"]),
                    BaselineEntry(kept["pattern"], kept["reason"], kept.get("operator"), backend),
                )
    return Baseline(tuple(expected.values()), tuple(flaky.values()))
