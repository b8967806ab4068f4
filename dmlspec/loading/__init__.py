"""Load spec/ into the typed model, reporting every problem with its file and JSON pointer.

Loading is three passes per file: strict JSON (duplicate keys are errors), JSON Schema
validation (shape, types, unknown keys), then cross-checks the schema cannot express
(names that must exist, rows that must not overlap, expressions that must parse and
type-check). A file that fails an earlier pass is not cross-checked. All problems of all files
are gathered into one `SpecError`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from .. import model as m
from ..errors import Problem, SpecError
from ..jsonio import JsonReadError, pointer, read_json_file
from .common import CommonBuilder
from .operator import OperatorBuilder
from .report import Report

__all__ = ["default_spec_dir", "load_catalog", "load_common"]

COMMON_FILE = "common.json"
OPERATORS_DIR = "operators"
SCHEMA_DIR = "schema"
COMMON_SCHEMA = "common.schema.json"
OPERATOR_SCHEMA = "operator.schema.json"


def default_spec_dir() -> Path:
    """$DMLSPEC_SPEC_DIR, else the checkout's spec/ beside the dmlspec package, else the copy
    an installed wheel carries (dmlspec/_spec)."""
    override = os.environ.get("DMLSPEC_SPEC_DIR")
    if override:
        return Path(override)
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "spec"
    return checkout if (checkout / COMMON_FILE).is_file() else package / "_spec"


def load_catalog(spec_dir: Path | None = None) -> m.Catalog:
    """Load and cross-check every spec; raise `SpecError` listing all problems.

    The model is immutable, so a folder whose files hold the same bytes as at an earlier call
    in this process gives that call's catalog again (loading takes about two seconds, and the
    suites, the reference and the command line each ask for it)."""
    folder = spec_dir or default_spec_dir()
    key = _fingerprint(folder)
    if key is not None and key in _LOADED:
        return _LOADED[key]
    marker = _schema_marker(key[1]) if key is not None else None
    catalog = _CatalogLoader(folder, schema_checked=marker is not None and marker.exists()).load()
    if key is not None:
        _LOADED[key] = catalog
    if marker is not None and not marker.exists():
        _mark(marker)
    return catalog


_LOADED: dict[tuple[str, str], m.Catalog] = {}
SCHEMA_CACHE_VARIABLE = "DMLSPEC_SCHEMA_CACHE"  # a folder, or "off"
_MARKERS_KEPT = 32


def _schema_marker(digest: str) -> Path | None:
    """The file whose presence says that a folder with these bytes (schemas included) passed
    the JSON Schema checks, which take 60% of a load and give the same verdict for the same
    bytes: in $DMLSPEC_SCHEMA_CACHE, else $XDG_CACHE_HOME/dmlspec/schema-checked
    (~/.cache/...). "off": none, every load checks."""
    setting = os.environ.get(SCHEMA_CACHE_VARIABLE, "")
    if setting.lower() == "off":
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = Path(setting) if setting else base / "dmlspec" / "schema-checked"
    return folder / f"{digest}-jsonschema-{importlib.metadata.version('jsonschema')}"


def _mark(marker: Path) -> None:
    """Leave the marker (empty) and keep only the newest few; a read-only cache is no error."""
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        markers = sorted(marker.parent.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in markers[_MARKERS_KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _fingerprint(folder: Path) -> tuple[str, str] | None:
    """The folder and a digest of every file `load` reads (None when one cannot be read: the
    loader then reports it)."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        files = [
            folder / SCHEMA_DIR / COMMON_SCHEMA,
            folder / SCHEMA_DIR / OPERATOR_SCHEMA,
            folder / COMMON_FILE,
            *sorted((folder / OPERATORS_DIR).glob("*.json")),
        ]
        for path in files:
            data = path.read_bytes()
            digest.update(f"{path.relative_to(folder).as_posix()}\0{len(data)}\0".encode())
            digest.update(data)
        return str(folder.resolve()), digest.hexdigest()
    except OSError:
        return None


def load_common(spec_dir: Path | None = None) -> m.CommonSpec:
    """Load spec/common.json alone (the drafter needs it while operator specs may be broken)."""
    return _CatalogLoader(spec_dir or default_spec_dir()).load_common()


class _CatalogLoader:
    def __init__(self, spec_dir: Path, schema_checked: bool = False) -> None:
        self.spec_dir = spec_dir
        self.problems: list[Problem] = []
        self.schema_checked = schema_checked  # these very bytes passed the schemas before

    def display(self, path: Path) -> str:
        try:
            return f"{self.spec_dir.name}/{path.relative_to(self.spec_dir).as_posix()}"
        except ValueError:
            return str(path)

    def read(self, path: Path, report: Report) -> Any:
        try:
            return read_json_file(path)
        except JsonReadError as error:
            for where, message in error.problems:
                report.at(where, message)
            return None

    def validators(self) -> tuple[jsonschema.Validator | None, jsonschema.Validator | None] | None:
        """The common and operator schemas' validators; None for both when these bytes passed
        them before; None when a schema is broken (reported)."""
        if self.schema_checked:
            return None, None
        schemas = {}
        for name in (COMMON_SCHEMA, OPERATOR_SCHEMA):
            path = self.spec_dir / SCHEMA_DIR / name
            report = Report(self.display(path), self.problems)
            schemas[name] = self.read(path, report)
            if schemas[name] is None:
                return None
            try:
                jsonschema.Draft202012Validator.check_schema(schemas[name])
            except jsonschema.SchemaError as error:
                report.at(list(error.absolute_path), f"not a valid JSON Schema: {error.message}")
                return None
        registry: Registry[Any] = Registry().with_resources(
            (s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s
        )
        return (
            jsonschema.Draft202012Validator(schemas[COMMON_SCHEMA], registry=registry),
            jsonschema.Draft202012Validator(schemas[OPERATOR_SCHEMA], registry=registry),
        )

    def schema_valid(
        self, validator: jsonschema.Validator | None, data: Any, report: Report
    ) -> bool:
        if validator is None:  # checked before
            return True
        errors = []
        for error in validator.iter_errors(data):
            if error.context:
                error = jsonschema.exceptions.best_match(error.context)
            errors.append((pointer(list(error.absolute_path)), error.message))
        for where, message in sorted(errors):
            report.at(where, message)
        return not errors

    def load_common(self) -> m.CommonSpec:
        if not self.spec_dir.is_dir():
            raise SpecError([Problem(str(self.spec_dir), "", "spec folder not found")])
        validators = self.validators()
        if validators is None:
            raise SpecError(self.problems)
        common_path = self.spec_dir / COMMON_FILE
        report = Report(self.display(common_path), self.problems)
        data = self.read(common_path, report)
        common = None
        if data is not None and self.schema_valid(validators[0], data, report):
            common = CommonBuilder(self.display(common_path), data, report).build()
        if common is None:
            raise SpecError(self.problems)
        return common

    def load(self) -> m.Catalog:
        if not self.spec_dir.is_dir():
            raise SpecError([Problem(str(self.spec_dir), "", "spec folder not found")])
        validators = self.validators()
        if validators is None:
            raise SpecError(self.problems)
        common_validator, operator_validator = validators

        common_path = self.spec_dir / COMMON_FILE
        report = Report(self.display(common_path), self.problems)
        data = self.read(common_path, report)
        common = None
        if data is not None and self.schema_valid(common_validator, data, report):
            common = CommonBuilder(self.display(common_path), data, report).build()
        if common is None:
            raise SpecError(self.problems)

        operators = []
        for path in sorted((self.spec_dir / OPERATORS_DIR).glob("*.json")):
            report = Report(self.display(path), self.problems)
            data = self.read(path, report)
            if data is None or not self.schema_valid(operator_validator, data, report):
                continue
            spec = OperatorBuilder(self.display(path), path.stem, data, common, report).build()
            if spec is not None:
                operators.append(spec)
        self.check_catalog(operators)
        if self.problems:
            raise SpecError(self.problems)
        return m.Catalog(common, tuple(sorted(operators, key=lambda s: s.name)))

    def check_catalog(self, operators: list[m.OperatorSpec]) -> None:
        owners: dict[str, str] = {}
        for spec in operators:
            report = Report(spec.path, self.problems)
            for operator_type in spec.operator_types:
                if operator_type in owners:
                    report.at(
                        "/operator_type",
                        f"{operator_type} is already defined by {owners[operator_type]}",
                    )
                owners[operator_type] = spec.path
