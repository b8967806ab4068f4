"""`dmlspec generate`: render generated/ from the specs, or check that it is current."""

from __future__ import annotations

from pathlib import Path

from ..model import Catalog
from .dest.common import PATH as COMMON_PATH
from .dest.common import render_common
from .dest.kernels import render_kernel, render_kernels_api, render_kernels_package
from .dest.package import render_package, render_validators_package
from .dest.tests import render_suite, suite_path
from .dest.validators import module_name, render_validator
from .files import Change, FileManager

__all__ = ["Change", "default_output_dir", "generate", "render"]


def default_output_dir() -> Path:
    """The checkout's generated/ beside the dmlspec package; where there is none (a wheel
    install), the installed dmlspec_generated package, which is the same files."""
    checkout = Path(__file__).resolve().parents[2] / "generated"
    if (checkout / "__init__.py").is_file():
        return checkout
    import dmlspec_generated

    return Path(dmlspec_generated.__file__).resolve().parent


def render(catalog: Catalog, output_dir: Path) -> FileManager:
    """Every generated file, rendered in memory."""
    files = FileManager(output_dir)
    files.add("__init__.py", render_package(catalog))
    files.add("validators/__init__.py", render_validators_package(catalog))
    files.add(COMMON_PATH, render_common(catalog.common))
    files.add("kernels/__init__.py", render_kernels_package(catalog))
    files.add("kernels/api.py", render_kernels_api(catalog))
    for spec in catalog.operators:
        files.add(f"validators/{module_name(spec)}.py", render_validator(catalog, spec))
    for spec in catalog.with_kernels:
        files.add(f"kernels/{module_name(spec)}.py", render_kernel(catalog, spec))
        files.add(suite_path(spec), render_suite(catalog, spec))
    return files


def generate(catalog: Catalog, output_dir: Path, check: bool = False) -> list[Change]:
    """Write (or with `check`, only compare) generated files; return the differences."""
    files = render(catalog, output_dir)
    if check:
        return files.changes()
    # generated/ holds only what dmlspec writes; another folder may hold a user's own files.
    return files.write(remove_any=output_dir.resolve() == default_output_dir().resolve())
