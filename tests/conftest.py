"""Shared fixtures: the loaded catalog and the folder of DirectML docs beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from dmlspec import load_catalog
from dmlspec.model import Catalog

REPO_ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = REPO_ROOT / "spec"
SHARED_DIR = REPO_ROOT.parent / "shared"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(SPEC_DIR)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED_DIR / "reference" / "directml-docs").is_dir():
        pytest.skip(f"DirectML docs not found at {SHARED_DIR} (the shared/ folder beside the repo)")
    return SHARED_DIR
