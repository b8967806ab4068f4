"""The package's layout: one family name across kernels/, reference/, backends/onnxruntime/
and the benchmark's cases (the spec's kernel.primitive names it), modules of a size a reader
holds in mind, and no import cycle."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from dmlspec import load_catalog
from dmlspec.bench.cases import case_families

PACKAGE = Path(__file__).resolve().parents[1] / "dmlspec"
CATALOG = load_catalog()
FAMILIES = sorted({spec.checked_kernel.primitive for spec in CATALOG.with_kernels})


def _short(function: str) -> str:
    return function.removeprefix("DML_OPERATOR_")


def test_every_kernel_names_a_family_primitive() -> None:
    from dmlspec.kernels import primitives

    assert sorted(primitives.__all__) == FAMILIES
    for spec in CATALOG.with_kernels:
        assert spec.checked_kernel.function is not None, spec.name


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_has_one_name_in_every_layer(family: str) -> None:
    kernels = importlib.import_module(f"dmlspec.kernels.{family}")
    reference = importlib.import_module(f"dmlspec.reference.{family}")
    graphs = importlib.import_module(f"dmlspec.backends.onnxruntime.{family}")
    members = [s for s in CATALOG.with_kernels if s.checked_kernel.primitive == family]
    reference_names = set().union(
        *(
            set(value)
            for value in vars(reference).values()
            if isinstance(value, dict | frozenset)
            and value
            and all(isinstance(k, str) for k in value)
        )
    )
    graph_names = set().union(
        *(
            set(value)
            for name, value in vars(graphs).items()
            if name.isupper() and isinstance(value, dict | frozenset)
        )
    )
    for spec in members:
        function = _short(str(spec.checked_kernel.function))
        assert function.removeprefix("ELEMENT_WISE_") in kernels.FUNCTIONS, spec.name
        assert spec.name in reference_names, f"{spec.name} is not in reference/{family}.py"
        kind = "SCATTER_ELEMENTS" if spec.name == "SCATTER" else spec.name
        if kind != "RANDOM_GENERATOR" or family == "generator":
            assert kind in graph_names, f"{spec.name} is not in backends/onnxruntime/{family}.py"


def test_the_benchmark_cases_are_by_family() -> None:
    cases = PACKAGE / "bench" / "cases"
    families = {f for f in case_families().values() if f != "seed"}
    for family in families:
        assert (cases / f"{family}.py").is_file(), family


def _imports(path: Path, module: str) -> set[str]:
    """The dmlspec modules a module imports (absolute names), inside functions too."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.startswith("dmlspec"):
                found.add(target)
                found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dmlspec"))
    return found


def test_no_import_cycle() -> None:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {
        name: {m for m in _imports(path, name) if m in modules and m != name}
        for name, path in modules.items()
    }
    # A package's __init__ re-exporting its modules is not a cycle of its modules.
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, trail: list[str]) -> bool:
        state[node] = 1
        for child in sorted(graph[node]):
            if child.startswith(node + "."):
                continue
            if state.get(child) == 1:
                cycle.extend([*trail[trail.index(child) :], child] if child in trail else [child])
                return True
            if child not in state and visit(child, [*trail, child]):
                return True
        state[node] = 2
        return False

    for name in sorted(graph):
        if name not in state and visit(name, [name]):
            break
    assert not cycle, " -> ".join(cycle)
