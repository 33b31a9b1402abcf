"""Fixtures shared by the workflow tests: one finished run of the tiny config for the session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def finished_tiny_run(tmp_path_factory) -> Path:
    """A workspace in which config/test/config.yaml ran to completion, made once per session.
    Never change it: take a copy (test_workflow.copy_of_finished_run)."""
    from test_workflow import CONFIG, make_workspace, snakemake, stop_ray_head

    ws = make_workspace(tmp_path_factory.mktemp("tiny-finished") / "ws")
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
    finally:
        stop_ray_head(ws)
    return ws
