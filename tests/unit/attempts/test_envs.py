"""envs/tcsexam.yaml lists the same dependencies as pyproject.toml (names and lower bounds)."""

from __future__ import annotations

import re
import tomllib

import yaml

# conda-forge names of PyPI packages whose names differ
CONDA_NAME = {"ray": "ray-default", "docker": "docker-py"}


def _split(spec: str) -> tuple[str, str]:
    match = re.match(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$", spec)
    assert match, spec
    return match.group(1).lower(), match.group(3).replace(" ", "")


def test_conda_env_matches_pyproject(project_root):
    project = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((project_root / "envs" / "tcsexam.yaml").read_text())
    conda = {}
    pip = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip += dep.get("pip", [])
            continue
        name, bound = _split(dep)
        conda[name] = bound
    for dep in pip:  # PyPI-only packages, from pip inside the environment, with pyproject's bounds
        if not dep.strip().startswith(("-", ".")):
            name, bound = _split(dep)
            conda[name] = bound
    wanted = {}
    for spec in project["dependencies"]:
        name, bound = _split(spec)
        wanted[CONDA_NAME.get(name, name)] = bound
    missing = sorted(set(wanted) - set(conda))
    assert not missing, f"envs/tcsexam.yaml lacks {missing}"
    for name, bound in wanted.items():
        assert conda[name] == bound, f"{name}: pyproject {bound!r}, envs/tcsexam.yaml {conda[name]!r}"
    extra = sorted(set(conda) - set(wanted) - {"python", "pip", "setuptools", "wheel"})  # + the post-deploy build
    assert not extra, f"envs/tcsexam.yaml has dependencies pyproject.toml lacks: {extra}"
    assert conda["python"].startswith("=" + project["requires-python"].lstrip(">=")), conda["python"]
    # a relative path would resolve against Snakemake's copy (.snakemake/conda/<hash>.yaml):
    # the package itself is installed by the post-deploy script (tests/unit/test_conda_deploy.py)
    assert not any(p.strip().startswith(("-e", "--editable", ".")) for p in pip), pip
    assert (project_root / "envs" / "tcsexam.post-deploy.sh").is_file()


def test_snakefile_min_version_is_the_dependency_bound(project_root):
    """The Snakefile asks for the Snakemake the rules need: the lower bound pyproject.toml installs
    (and the installed one meets it)."""
    from importlib import metadata

    project = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    bound = next(_split(d)[1] for d in project["dependencies"] if _split(d)[0] == "snakemake")
    asked = re.search(r'^min_version\("([0-9.]+)"\)', (project_root / "Snakefile").read_text(), re.M)
    assert asked and bound == f">={asked.group(1)}", (asked, bound)
    installed = tuple(int(x) for x in metadata.version("snakemake").split(".")[:2])
    assert installed >= tuple(int(x) for x in asked.group(1).split(".")[:2])
