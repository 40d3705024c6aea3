"""The package's shape: each part of the job imports only the parts below it, and no module imports itself
back through another. Read from the source's own import statements (every one, in functions too), so a new
arrow that runs upward or closes a circle fails here with the two modules named."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "generator"

# The one-way arrows, lowest first: a package may import its own modules and those of any package on a
# lower floor, never one on its own floor or above. "" is the root: errors.py, frozen.py and bounds.py.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("",),
    ("catalog",),
    ("checkpoint", "plan"),
    ("artifacts",),
    ("check", "report"),
    ("machine",),
    ("cli",),
)
FLOOR = {package: level for level, packages in enumerate(FLOORS) for package in packages}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["recipegen", *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The recipegen modules this module imports (a name imported from a package counts as its module)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                target = f"{module}.{alias.name}"
                found.add(target if target in known else module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    if module == "recipegen.__main__":  # `python -m recipegen` is the command line's
        return "cli"
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in FLOOR) else ""


def test_every_package_has_a_floor_and_says_what_it_owns() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()} - {"data"}
    assert packages == set(FLOOR) - {""}
    for name in packages:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import" in doc, f"generator/{name}/__init__.py: say what it owns and what it may import"


def test_imports_only_run_downward() -> None:
    upward = [
        f"{importer} imports {imported} ({_package(importer) or 'root'} may not use {_package(imported) or 'root'})"
        for importer, targets in _graph().items()
        for imported in sorted(targets)
        if _package(importer) != _package(imported) and FLOOR[_package(importer)] <= FLOOR[_package(imported)]
    ]
    assert upward == []


def test_no_import_circles() -> None:
    graph = _graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == [], "\n".join(" → ".join(c) for c in circles)


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The reader itself: a relative import that climbs out of its package is resolved to the right module."""
    module = tmp_path / "m.py"
    module.write_text("from ..cli.app import main\nfrom . import names\nimport recipegen.plan.resolve\n")
    known = {"recipegen.cli.app", "recipegen.catalog.names", "recipegen.plan.resolve"}
    assert _imports("recipegen.catalog.m", module, known) == known
