"""`--software-deployment-method conda`: the package gets into the rules' environment wherever
Snakemake keeps its copies of envs/tcsexam.yaml and its post-deploy script. Snakemake copies both
to `<conda prefix>/<hash>.yaml` and `<hash>.post-deploy.sh`, creates the environment from the copy
and runs the script inside it from the workflow's working directory; here the same copy runs in a
fresh Python environment (no conda-forge can be reached from CI, so the conda packages themselves
are not installed: a real `conda env create` is not run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _deploy_copy(project_root: Path, prefix: Path) -> Path:
    prefix.mkdir(parents=True)
    env_path = prefix / "0123456789abcdef"  # Snakemake: <conda prefix>/<content hash>
    shutil.copy2(project_root / "envs" / "tcsexam.yaml", f"{env_path}.yaml")
    shutil.copy2(project_root / "envs" / "tcsexam.post-deploy.sh", f"{env_path}.post-deploy.sh")
    return Path(f"{env_path}.post-deploy.sh")


@pytest.mark.slow
def test_post_deploy_installs_this_checkout_from_snakemakes_copy(project_root, tmp_path):
    script = _deploy_copy(project_root, tmp_path / "elsewhere" / "conda-prefix")
    env = tmp_path / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(env)], check=True, timeout=300)
    # what envs/tcsexam.yaml gives the environment for the editable build (setuptools >= 68, wheel)
    subprocess.run([str(env / "bin" / "pip"), "install", "-q", "setuptools>=68", "wheel"], check=True, timeout=600)
    workdir = tmp_path / "workdir"  # Snakemake's working directory: not the repository
    workdir.mkdir()
    path = f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}"
    run_env = dict(os.environ, PATH=path, TCSEXAM_SOURCE=str(project_root), PIP_DISABLE_PIP_VERSION_CHECK="1")
    run_env.pop("PYTHONPATH", None)
    out = subprocess.run(["bash", str(script)], cwd=workdir, env=run_env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    where = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import tcsexam; print(tcsexam.__file__)"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).resolve() == (project_root / "src" / "tcsexam" / "__init__.py").resolve()


def test_post_deploy_without_the_source_is_one_line(project_root, tmp_path):
    script = _deploy_copy(project_root, tmp_path / "prefix")
    env = {k: v for k, v in os.environ.items() if k != "TCSEXAM_SOURCE"}
    out = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "TCSEXAM_SOURCE" in out.stderr
