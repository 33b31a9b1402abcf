"""`tcsexam WORD` loads only WORD's module (`tcsexam.cli.COMMANDS`): the table must name every
command each module registers, and a command must parse with its module alone."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from tcsexam.cli import COMMAND_MODULES, COMMANDS, _command_modules, build_parser


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_each_module_registers_exactly_its_words(module):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(module).register(sub)
    assert sorted(sub.choices) == sorted(word for word, mod in COMMANDS.items() if mod == module)


def test_a_command_word_selects_its_module_alone():
    assert _command_modules(["-v", "attempts", "verdict-row", "--help"]) == ("tcsexam.attempts.cli",)
    assert _command_modules(["--help"]) is None
    assert _command_modules(["no-such-command"]) is None
    full = build_parser()
    assert sorted(full._subparsers._group_actions[0].choices) == sorted(COMMANDS)


def test_a_workflow_glue_command_imports_neither_numpy_nor_ray():
    probe = (
        "import sys; from tcsexam.cli import build_parser, _command_modules;"
        "build_parser(_command_modules(['attempts', 'table']));"
        "print(sorted(m for m in ('numpy', 'ray', 'tcsexam.problems') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
