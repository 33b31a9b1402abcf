"""The source tree's shape: no import cycle between modules of `src/tcsexam`, nor between its
packages (`tcsexam.X`: a subpackage, or a top-level module on its own), nor between a subpackage
and the package above it (`tcsexam.runner.limiter` and `tcsexam.runner`), function-level and
type-only imports counted like module-level ones, and the command modules (`cli.py`, `*_cli.py`)
counted like every other module: a command sits above what it calls (it imports its own package
and those below it) and never imports another package's command module; Ray spoken to only in
`tcsexam.runner.ray`; `tcsexam.runner` at most 8 top-level modules (the rest in its subpackages:
the engine, Ray, the limiter, the sandboxes, ownership and scratch, the Solver-attempt path, the
observers); no module over 600 lines, no function over 100 lines or with 10 or more parameters."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 600
MAX_FUNCTION_LINES = 100
MAX_PARAMETERS = 9  #: self/cls not counted; *args and **kwargs one each


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "tcsexam").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of `modules` it imports (`from a.b import c` counts a.b.c when that
    is a module, else a.b; relative imports resolved; parent packages are not counted)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges.update(t for t in targets if t in modules and t != name)
        graph[name] = edges
    return graph


def package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module counts for: `tcsexam.X` for everything inside the subpackage
    `tcsexam.X`, a top-level module (`tcsexam.tasks`) and `tcsexam` itself for themselves."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and modules[module].name == "__init__.py"):
        return ".".join(parts[:2])
    return module


def innermost_package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module counts for when every subpackage, at any depth, is a package of its
    own (`tcsexam.runner.limiter` apart from `tcsexam.runner`); a top-level module for itself."""
    if modules[module].name == "__init__.py":
        return module
    parent = module.rpartition(".")[0]
    return module if parent == "tcsexam" else parent


def package_graph(graph: dict[str, set[str]], modules: dict[str, Path], of=package_of) -> dict[str, set[str]]:
    """package -> the other packages its modules import (from the module graph `graph`; `of`
    names the package a module counts for)."""
    out: dict[str, set[str]] = {}
    for name, edges in graph.items():
        package = of(name, modules)
        out.setdefault(package, set()).update(of(e, modules) for e in edges)
        out[package].discard(package)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _write_package(root: Path, files: dict[str, str]) -> dict[str, Path]:
    """Write a `tcsexam` package of `files` (path -> text) under `root`: module name -> path."""
    modules = {}
    for rel, text in files.items():
        path = root / "tcsexam" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        parts = ["tcsexam", *Path(rel).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_graph_joins_a_packages_modules(tmp_path):
    """A cycle through two packages is found although no two modules import each other, a top-level
    module is its own package, and imports inside one package are no edge (the checker's own test)."""
    files = {
        "__init__.py": "",
        "tasks.py": "def load():\n    from tcsexam.problems.base import X\n",
        "problems/__init__.py": "from tcsexam.problems.base import X\n",
        "problems/base.py": "X = 1\n",
        "problems/cli.py": "def main():\n    from tcsexam.tasks import load\n",
        "runner/__init__.py": "",
        "runner/a.py": "from tcsexam.runner import b\n",
        "runner/b.py": "from tcsexam.problems import X\n",
    }
    modules = _write_package(tmp_path, files)
    graph = import_graph(modules)
    assert find_cycle(graph) is None  # no module-level cycle ...
    packages = package_graph(graph, modules)
    assert packages["tcsexam.tasks"] == {"tcsexam.problems"}
    assert packages["tcsexam.runner"] == {"tcsexam.problems"}  # runner.a -> runner.b is inside runner
    assert find_cycle(packages) == ["tcsexam.problems", "tcsexam.tasks", "tcsexam.problems"]  # ... but one of packages
    modules.pop("tcsexam.problems.cli")
    assert find_cycle(package_graph(import_graph(modules), modules)) is None


def test_the_innermost_package_graph_sees_a_subpackage_importing_its_parent(tmp_path):
    """runner -> runner.limiter -> runner is no cycle when runner.limiter counts as runner, and one
    when every subpackage is a package of its own."""
    files = {
        "__init__.py": "",
        "runner/__init__.py": "",
        "runner/watch.py": "from tcsexam.runner.limiter.run import start\n",
        "runner/limiter/__init__.py": "",
        "runner/limiter/run.py": "def start():\n    from tcsexam.runner.watch import note\n",
    }
    modules = _write_package(tmp_path, files)
    graph = import_graph(modules)
    assert find_cycle(package_graph(graph, modules)) is None
    inner = package_graph(graph, modules, of=innermost_package_of)
    assert find_cycle(inner) == ["tcsexam.runner", "tcsexam.runner.limiter", "tcsexam.runner"]


def test_no_import_cycle_in_src():
    cycle = find_cycle(import_graph(_modules()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def is_command_module(module: str) -> bool:
    """A module of `tcsexam` sub-commands (`cli.py`, `*_cli.py`), which `tcsexam.cli`'s table
    loads by name."""
    last = module.rpartition(".")[2]
    return last == "cli" or last.endswith("_cli")


def test_no_package_import_cycle_in_src():
    """The command modules counted: a command that joins two packages lives in the upper one."""
    modules = _modules()
    cycle = find_cycle(package_graph(import_graph(modules), modules))
    assert cycle is None, "package import cycle: " + " -> ".join(cycle)


def test_no_subpackage_imports_its_parents_modules():
    """Nor with every subpackage a package of its own: `runner.limiter` and `runner.sandboxes` sit
    below `runner` and never import from it, however late the import."""
    modules = _modules()
    cycle = find_cycle(package_graph(import_graph(modules), modules, of=innermost_package_of))
    assert cycle is None, "package import cycle: " + " -> ".join(cycle)


ENTRY_POINTS = ("tcsexam.__main__", "tcsexam.launch", "tcsexam.forkserver")


def foreign_command_imports(modules: dict[str, Path]) -> dict[str, list[str]]:
    """module -> the command modules of other packages it imports (the entry points may import
    `tcsexam.cli`, the table of commands: `python -m tcsexam`, the console script `tcsexam.launch`
    and the fork server that runs it; a command module may import one of its own package's)."""
    wrong = {}
    for name, edges in import_graph(modules).items():
        own = innermost_package_of(name, modules)
        found = sorted(
            e
            for e in edges
            if is_command_module(e)
            and not (is_command_module(name) and innermost_package_of(e, modules) == own)
            and not (name in ENTRY_POINTS and e == "tcsexam.cli")
        )
        if found:
            wrong[name] = found
    return wrong


def test_foreign_command_imports_sees_a_sibling_command(tmp_path):
    files = {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/cli.py": "from tcsexam.a.solve_cli import x\nfrom tcsexam.b.cli import y\n",
        "a/solve_cli.py": "x = 1\n",
        "a/lib.py": "def f():\n    from tcsexam.a.cli import main\n",
        "b/__init__.py": "",
        "b/cli.py": "y = 1\n",
    }
    modules = _write_package(tmp_path, files)
    assert foreign_command_imports(modules) == {"tcsexam.a.cli": ["tcsexam.b.cli"], "tcsexam.a.lib": ["tcsexam.a.cli"]}


def test_no_module_imports_another_packages_command_module():
    wrong = foreign_command_imports(_modules())
    assert not wrong, f"modules importing another package's command module (or a library importing one): {wrong}"


MAX_RUNNER_MODULES = 8


def test_the_runner_keeps_at_most_8_top_level_modules():
    """`tcsexam.runner` holds its commands, the run options and the construction judge; the
    engine, Ray, the limiter, the sandboxes, ownership, the Solver-attempt path and the observers
    each have their own folder."""
    top = sorted(p.name for p in (SRC / "tcsexam" / "runner").glob("*.py"))
    assert len(top) <= MAX_RUNNER_MODULES, f"runner/ has {len(top)} top-level modules: {top}"


def third_party_importers(modules: dict[str, Path], package: str) -> set[str]:
    """The modules of `modules` that import the third-party `package` (at any depth)."""
    found = set()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            if package in roots:
                found.add(name)
    return found


def test_third_party_importers_sees_late_and_dotted_imports(tmp_path):
    modules = _write_package(
        tmp_path,
        {
            "a.py": "def f():\n    import ray\n",
            "b.py": "from ray.exceptions import RayError\n",
            "c.py": "import rays\n",
        },
    )
    assert third_party_importers(modules, "ray") == {"tcsexam.a", "tcsexam.b"}


def test_ray_is_used_only_in_its_own_folder():
    """Everything that speaks to Ray (the pools, a job's Ray, the shared head) is in
    `tcsexam.runner.ray`; the rest of the tree runs a batch through `runner.engine.batch`."""
    outside = {m for m in third_party_importers(_modules(), "ray") if not m.startswith("tcsexam.runner.ray.")}
    assert not outside, f"modules importing Ray outside tcsexam.runner.ray: {sorted(outside)}"


def test_no_module_over_600_lines():
    long = {name: n for name, path in _modules().items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def function_shapes(path: Path) -> list[tuple[str, int, int]]:
    """(qualified-ish name, lines, parameters) of every function and method in `path`."""
    shapes = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            n = len(params) + (a.vararg is not None) + (a.kwarg is not None)
            if params and params[0].arg in ("self", "cls"):
                n -= 1
            shapes.append((f"{path.stem}.{node.name}:{node.lineno}", node.end_lineno - node.lineno + 1, n))
    return shapes


def test_function_shapes_counts_lines_and_parameters(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("class C:\n    def f(self, a, *b, c, **d):\n        return 1\n\n\ndef g():\n    pass\n")
    assert sorted(function_shapes(src)) == [("m.f:2", 2, 4), ("m.g:6", 2, 0)]


def test_no_function_over_100_lines_or_with_10_parameters():
    shapes = [s for path in _modules().values() for s in function_shapes(path)]
    long = [f"{name} ({n} lines)" for name, n, _ in shapes if n > MAX_FUNCTION_LINES]
    wide = [f"{name} ({k} parameters)" for name, _, k in shapes if k > MAX_PARAMETERS]
    assert not long and not wide, f"too long: {long}; too many parameters: {wide}"
