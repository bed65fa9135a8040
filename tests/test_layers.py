"""The layers import one way: features <- scorer <- training, and only the CLI reaches back.

`features/` imports nothing from `scorer/` or `training/`; `scorer/` imports `training/` only in
its command-line modules (the model-making commands are training's); no private name (`_x`) is
imported from another module; `training/calibration/` uses `training.heads` through its public
names only; every package of `training/` says its job at its door.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
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


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_no_private_name_crosses_a_module():
    # A `_name` is its module's own: another module that needs it wants it public, or moved.
    bad = []
    for package in PACKAGES:
        for path in _files(package):
            for module, names, line in _imports(path):
                if module.split(".")[0] in PACKAGES and module != _module_of(path):
                    private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                    if private:
                        bad.append(f"{path.relative_to(ROOT)}:{line} {module}: {private}")
    assert not bad, "private names imported from another module:\n" + "\n".join(bad)


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


def _training_graph() -> dict[str, set[str]]:
    """{module: the training modules it imports, at any depth}; `from training.heads import
    select` counts as importing `training.heads.estimators.select`. Package __init__ and __main__
    files, which only name or run their modules, are left out."""
    graph: dict[str, set[str]] = {}
    for path in _files("training"):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        deps = set()
        for module, names, _ in _imports(path):
            if module.split(".")[0] != "training":
                continue
            folder = ROOT / module.replace(".", "/")
            subs = [f"{module}.{n}" for n in names if (folder / f"{n}.py").exists()]
            deps.update(subs or [module])
        graph[_module_of(path)] = deps
    return graph


def _package(module: str) -> str:
    """`training.heads.estimators.select` -> `training.heads`; a top-level module -> `training`."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (ROOT.joinpath(*parts) / "__init__.py").exists()):
        return ".".join(parts[:2])
    return "training"


def _cycle(graph: Mapping[str, set[str]]) -> list[str]:
    """One cycle of `graph` (its nodes in order, the first again at the end), or []."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_training_modules_import_one_way():
    # Inside each package the imports run one way, so its files read bottom-up in one order.
    graph = _training_graph()
    cycle = _cycle(graph)
    assert not cycle, "training modules that import each other round: " + " -> ".join(cycle)


def test_no_training_package_imports_one_that_imports_it_back():
    # training.gleu, .heads, .calibration, .judged and the top-level modules (training.cli and
    # the old command names) as nodes: calibration may use heads, heads never calibration.
    packages: dict[str, set[str]] = {}
    for module, deps in _training_graph().items():
        edges = packages.setdefault(_package(module), set())
        edges.update(_package(d) for d in deps if _package(d) != _package(module))
    cycle = _cycle(packages)
    assert not cycle, "training packages that import each other round: " + " -> ".join(cycle)


def _assigned(tree: ast.Module, name: str):
    """The literal value of the module-level `name = ...` (None where there is none)."""
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == name for t in n.targets):
            return ast.literal_eval(n.value)
    return None


TRAINING_PACKAGES = sorted(
    p.parent.relative_to(ROOT / "training").as_posix()
    for p in (ROOT / "training").glob("*/**/__init__.py")
)


@pytest.mark.parametrize("package", TRAINING_PACKAGES)
def test_each_training_package_says_its_job_and_names_its_modules(package):
    # A newcomer finds where a change goes from the docstrings at the doors. A package names
    # its modules and sub-packages in `__all__`, or, where it exports names (each from the
    # module `_WHERE` gives), those names.
    init = ROOT / "training" / package / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"training/{package}/__init__.py has no docstring"
    names = _assigned(tree, "__all__")
    where = _assigned(tree, "_WHERE")
    if where is not None:
        assert sorted(names) == sorted(where)
        missing = [m for m in where.values() if not (ROOT / f"{m.replace('.', '/')}.py").exists()]
        assert not missing, f"training/{package} exports names of no module: {missing}"
        return
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module != "__future__"]
    bound = {a.asname or a.name for n in imports for a in n.names}
    if bound:  # a package whose door gives its functions
        assert set(names) <= bound, f"training/{package} exports names it does not import"
        return
    modules = {p.stem for p in init.parent.glob("*.py") if not p.stem.startswith("__")}
    subpackages = {p.parent.name for p in init.parent.glob("*/__init__.py")}
    assert modules <= set(names) <= modules | subpackages


def test_calibration_uses_only_what_training_heads_exports():
    # `fluency calibrate` reads the heads through `training.heads`' public names, so the rooms
    # inside it can move without calibration noticing.
    public = set(_assigned(ast.parse((ROOT / "training/heads/__init__.py").read_text()), "__all__"))
    bad = []
    for path in _files("training/calibration"):
        for module, names, line in _imports(path):
            rel = f"{path.relative_to(ROOT)}:{line}"
            if module.startswith("training.heads."):
                bad.append(f"{rel} imports {module}: import from training.heads")
            elif module == "training.heads" and set(names) - public:
                bad.append(f"{rel} imports {sorted(set(names) - public)}, not in its __all__")
    assert not bad, "calibration reaching past training.heads:\n" + "\n".join(bad)
