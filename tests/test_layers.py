"""The package's layers: arrows only point down. Read from the source's own import statements (lazy imports
inside functions included), so a violation fails here before anyone draws the house."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "riskcore"
GROUND = {"paths", "engine", "storage", "publish", "db",
          "integrity", "parallel", "stats", "floatdot", "params"}
ALGORITHMS = ("agents", "recognition", "search", "learning", "tuning")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The riskcore modules a file imports (`from riskcore.x import y` counts `riskcore.x`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("riskcore"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            out |= {n for n in names if _is_module(n)} or {node.module}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("riskcore")}
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").exists() or (PACKAGE.parent / rel / "__init__.py").exists()


GRAPH = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("package", ALGORITHMS)
def test_algorithm_packages_never_import_the_experiments_or_the_command_line(package):
    bad = {m: sorted(i for i in deps if _top(i) in ("experiments", "cli")) for m, deps in GRAPH.items()
           if _top(m) == package}
    assert not {m: d for m, d in bad.items() if d}


def test_the_ground_floor_imports_only_the_ground_floor():
    bad = {m: sorted(i for i in deps if _top(i) not in GROUND | {""}) for m, deps in GRAPH.items()
           if _top(m) in GROUND}
    assert not {m: d for m, d in bad.items() if d}


def test_no_two_modules_import_each_other_in_a_circle():
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in GRAPH.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = sorted(m for m in GRAPH if m in reach(m) and m != "riskcore")
    assert not circles


def test_no_module_imports_another_modules_private_names():
    private = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("riskcore"):
                private += [f"{module_name(path)}: {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_")]
    assert not private, "make the name public or keep the code where it is used"
