"""Which install brings an optional Python package, said as the command that installs it.

The main job's install (`pip install -e .`) brings everything `dmlspec conformance`,
`validate`, `dispatch` and `export --format dxdispatch` need; ONNX and onnxruntime come with
the `peers` extra. A message about a missing package names the extra with both commands: one
for a checkout, one for an installed package."""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRA_OF", "importable", "install_hint"]

# Import name -> the extra of pyproject.toml that installs it ("" for a main dependency).
EXTRA_OF = {
    "onnx": "peers",
    "onnxruntime": "peers",
    "xdist": "",
    "numpy": "",
    "jax": "",
    "jaxlib": "",
    "jsonschema": "",
    "referencing": "",
    "hypothesis": "",
    "pytest": "",
}


def install_hint(package: str) -> str:
    """How to install what brings `package`: the extra's two commands, or dmlspec's own
    dependencies for a main one (or an unknown one)."""
    extra = EXTRA_OF.get(package, "")
    if extra:
        return (
            f"{package} comes with dmlspec's {extra} extra: in a checkout run "
            f'python -m pip install -e ".[{extra}]", else python -m pip install '
            f'"dmlspec[{extra}]"'
        )
    return (
        f"{package} is a dependency of dmlspec: in a checkout run python -m pip install -e ., "
        "else python -m pip install dmlspec"
    )


def importable(package: str) -> bool:
    """Whether this Python can import `package` (without importing it)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # blocked, or a None left in sys.modules
        return False
