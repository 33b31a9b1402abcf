"""`make run` installs the core only (`pip install -e .`): everything the bundled default's
candidates import must be the standard library, the candidate's own files, or a core dependency
in pyproject.toml (numpy, python-sat, tsplib95, ...), never a test or OR-Space extra."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata

import yaml


def _name(spec: str) -> str:
    return re.match(r"^\s*([A-Za-z0-9_.-]+)", spec).group(1).lower().replace("_", "-")


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def test_the_defaults_candidates_import_only_core_dependencies(project_root):
    project = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    core = {_name(d) for d in project["dependencies"]}
    config = yaml.safe_load((project_root / "config" / "config.yaml").read_text())
    dists = metadata.packages_distributions()
    missing = []
    for model in (m["name"] for m in config["models"]):
        for program in sorted((project_root / config["solvers_dir"] / model).rglob("*.py")):
            local = {p.stem for p in program.parent.glob("*.py")}
            for module in sorted(_imports(program) - local - set(sys.stdlib_module_names) - {"__future__"}):
                names = {_name(d) for d in dists.get(module, [module])}
                if not names & core:
                    missing.append(f"{program.relative_to(project_root)}: {module} ({', '.join(sorted(names))})")
    assert not missing, f"not a core dependency (make run would lack it): {missing}"
    assert "tsplib95" in core and "gurobipy" not in core and "coptpy" not in core
