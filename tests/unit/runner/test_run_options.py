"""One way to build a run (tcsexam.runner.options): every command that runs programs declares its
run options with `add_run_options` and reads them back with `run_options`, over its own defaults.
Checked on the real parsers of the four commands."""

from __future__ import annotations

import dataclasses

import pytest

from tcsexam.cli import build_parser
from tcsexam.errors import UsageError
from tcsexam.orspace.execute import DEFAULT_RUN
from tcsexam.runner.engine.batch import RUN_ONE, RunOptions
from tcsexam.runner.options import run_options

RUN = ["run", "--task", "t", "--candidate", "c", "--output", "o.json"]
CONSTRUCTION = ["construction", "run", "--task", "t", "--submission", "s", "--output", "o.json"]
EXECUTE = ["orspace", "execute", "--workspaces", "w", "--output-dir", "o"]
PROOF = ["proof", "check", "--task", "t", "--submission", "s", "--output", "v.json"]


def _options(argv: list[str], base: RunOptions | None = None) -> RunOptions:
    return run_options(build_parser().parse_args(argv), base)


@pytest.mark.parametrize(
    ("argv", "base"),
    [(RUN, None), (CONSTRUCTION, None), (EXECUTE, DEFAULT_RUN), (PROOF, RUN_ONE)],
    ids=["run", "construction run", "orspace execute", "proof check"],
)
def test_each_command_left_at_its_defaults_runs_with_its_own(argv, base):
    assert _options(argv, base) == (base or RunOptions())
    chosen = _options([*argv, "--sandbox", "local", "--allow-unsandboxed", "--limiter", "light"], base)
    assert (chosen.sandbox, chosen.allow_unsandboxed, chosen.limiter) == ("local", True, "light")
    assert chosen.pool == (base or RunOptions()).pool  # nothing else changed


def test_orspace_execute_takes_the_pool_and_ray_options_like_tcsexam_run():
    execute = _options([*EXECUTE, "--workers", "3", "--ray-head", "/tmp/head", "--max-retries", "4"], DEFAULT_RUN)
    run = _options([*RUN, "--workers", "3", "--ray-head", "/tmp/head", "--max-retries", "4"])
    assert (
        execute.pool
        == run.pool
        == dataclasses.replace(RunOptions().pool, workers=3, ray_head="/tmp/head", max_retries=4)
    )
    assert not execute.progress and run.progress  # each command's own default
    assert _options([*EXECUTE, "--no-ray"], DEFAULT_RUN).pool.use_ray is False


def test_options_that_cannot_go_together_are_one_usage_error():
    with pytest.raises(UsageError, match="--no-ray runs one instance at a time"):
        _options([*EXECUTE, "--no-ray", "--workers", "2"], DEFAULT_RUN)
    with pytest.raises(SystemExit):  # argparse: --ray-address and --ray-head exclude each other
        _options([*RUN, "--ray-address", "a", "--ray-head", "d"])


def test_proof_check_has_no_pool_to_choose():
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args([*PROOF, "--workers", "2"])
