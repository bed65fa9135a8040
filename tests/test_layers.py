"""The layers import one way: features <- scorer <- training, and only the CLI reaches back.

`features/` imports nothing from `scorer/` or `training/`; `scorer/` imports `training/` only in
its command-line modules (the model-making commands are training's); no private name (`_x`) is
imported from another top-level package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("features", "scorer", "training")
CLI_MODULES = {"scorer/cli.py", "scorer/evidence/cli.py"}


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, names, line) for every import in the file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, [], node.lineno) for a in node.names)
    return out


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_follow_the_layers(package):
    bad = []
    for path in _files(package):
        rel = path.relative_to(ROOT).as_posix()
        for module, _, line in _imports(path):
            top = module.split(".")[0]
            if package == "features" and top in ("scorer", "training"):
                bad.append(f"{rel}:{line} imports {module}")
            if package == "scorer" and top == "training" and rel not in CLI_MODULES:
                bad.append(f"{rel}:{line} imports {module}")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_private_name_crosses_a_package():
    bad = []
    for package in PACKAGES:
        for path in _files(package):
            for module, names, line in _imports(path):
                top = module.split(".")[0]
                if top in PACKAGES and top != package:
                    private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                    if private:
                        bad.append(f"{path.relative_to(ROOT)}:{line} {module}: {private}")
    assert not bad, "private names imported across packages:\n" + "\n".join(bad)


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_no_two_modules_import_each_other():
    # A pair that imports each other, even lazily inside a function, has no order to read or
    # test them in. Package __init__ files re-export their modules and are left out.
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in _files(package):
            if path.name == "__init__.py":
                continue
            graph[_module_of(path)] = {m for m, _, _ in _imports(path)}
    pairs = sorted(
        f"{a} <-> {b}" for a, deps in graph.items() for b in deps if a < b and a in graph.get(b, ())
    )
    assert not pairs, "modules that import each other:\n" + "\n".join(pairs)
