"""The package is laid out as the pipeline it runs: stage packages that import only downward, no import circle.

Stages, lowest first: core < tasks < prompts < generate < score < analysis < grid < cli. A module may import
from its own stage or a lower one, function-local imports included; the rule files import only ``grid``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "workflow" / "babeleval"
STAGES = ("core", "tasks", "prompts", "generate", "score", "analysis", "grid", "cli")


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(path, package): path for path in package.rglob("*.py")}


def imported(path: Path, known: dict[str, Path], package_dir: Path = PACKAGE) -> set[str]:
    """Every babeleval module ``path`` imports, at module level or inside a function."""
    name = module_name(path, package_dir)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "babeleval"}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            if target.split(".")[0] != "babeleval":
                continue
            found.add(target)
            # ``from . import x`` and ``from .pkg import module`` import modules too
            found |= {f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known}
    return {module for module in found if module in known} - {name}


def stage(module: str) -> int:
    """A module's stage; the package's own entry points (``__init__``, ``__main__``) sit above every stage."""
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else len(STAGES)


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    known = modules(package)
    return {name: imported(path, known, package) for name, path in known.items()}


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    return sorted(f"{importer} ({STAGES[stage(importer)]}) imports {target} ({STAGES[stage(target)]})"
                  for importer, targets in edges.items() for target in targets
                  if stage(importer) < len(STAGES) and stage(target) > stage(importer))


def test_every_module_belongs_to_a_stage():
    loose = [name for name in modules() if stage(name) == len(STAGES) and name not in ("babeleval", "babeleval.__main__")]
    assert not loose, f"modules outside the stage packages: {loose}"


def test_imports_run_only_downward():
    upward = upward_imports(graph())
    assert not upward, "\n".join(upward)


def test_no_import_circle():
    edges = graph()
    # a package imports its submodules' names; a submodule importing its own package is the usual Python layout
    edges = {module: {t for t in targets if not module.startswith(t + ".")} for module, targets in edges.items()}
    circles, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(edges.get(module, ())):
            if state.get(target) == "open":
                circles.append(" -> ".join(trail[trail.index(target):] + [module, target]) if target in trail
                               else f"{module} -> {target}")
            elif target not in state:
                visit(target, trail + [module])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert not circles, "\n".join(circles)


def test_rule_files_import_only_the_grid():
    imports = re.compile(r"^\s*(?:from|import)\s+(babeleval[\w.]*)", re.M)
    outside = [f"{smk.name}: {module}" for smk in [ROOT / "Snakefile", *sorted((ROOT / "workflow/rules").glob("*.smk"))]
               for module in imports.findall(smk.read_text(encoding="utf-8"))
               if module != "babeleval.grid" and not module.startswith("babeleval.grid.")]
    assert not outside, "\n".join(outside)


def test_a_planted_upward_import_is_found(tmp_path):
    """The check itself: a function-local import from a lower stage to a higher one is reported."""
    package = tmp_path / "babeleval"
    for folder in ("core", "grid"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "grid" / "params.py").write_text("X = 1\n", encoding="utf-8")
    (package / "core" / "helper.py").write_text("def f():\n    from ..grid import params\n", encoding="utf-8")
    assert "babeleval.core.helper (core) imports babeleval.grid.params (grid)" in upward_imports(graph(package))
