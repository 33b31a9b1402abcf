"""The agent's tools through a scripted agent in the real sandbox: the text editor's commands
(create, view a file, a range and a folder, a unique replacement, an ambiguous one refused,
insert), the python tool, and the shell's exit code; what each returned is in the transcript."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import ScriptedAgent, mock_config, sandbox_config_or_skip, staged_demo, tool_outputs  # noqa: E402

from tcsexam.agents.generate import GenerationSettings, generate  # noqa: E402

pytestmark = pytest.mark.slow
WID = "or_space_101_build"
STEPS = [
    ("text_editor", {"command": "create", "path": "src/main.py", "file_text": "a = 1\nb = 1\nprint(a + b)\n"}),
    ("text_editor", {"command": "str_replace", "path": "src/main.py", "old_str": "a = 1", "new_str": "a = 40"}),
    ("text_editor", {"command": "str_replace", "path": "src/main.py", "old_str": "a", "new_str": "x"}),
    ("text_editor", {"command": "insert", "path": "src/main.py", "insert_line": 0, "new_str": "# the answer"}),
    ("text_editor", {"command": "view", "path": "src/main.py", "view_range": [2, 3]}),
    ("text_editor", {"command": "view", "path": "."}),
    ("python", {"code": "import runpy; runpy.run_path('src/main.py')"}),
    ("bash", {"command": "echo out; echo err >&2; exit 7"}),
    ("submit", {"answer": "done"}),
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tools")
    settings = GenerationSettings(
        staged=staged_demo(root, [WID]), output=root / "out", model=mock_config(), sandbox=sandbox_config_or_skip()
    )
    assert generate(settings, model=ScriptedAgent({WID: STEPS}).model())["complete"]
    return settings.output, tool_outputs(settings.output, WID)


def test_the_editor_edits_and_refuses_an_ambiguous_replacement(outputs):
    out, said = outputs
    assert "wrote src/main.py (3 lines)" in said[0]
    assert "replaced one occurrence" in said[1]
    assert "occurs 2 times" in said[2]  # `a = 40` and `print(a + b)`: nothing replaced
    assert "inserted 1 lines after line 0" in said[3]
    assert said[4].split("\n") == ["     2\ta = 40", "     3\tb = 1"]
    assert "src/main.py" in said[5] and "data/table_1.csv" in said[5]
    assert (out / "workspaces" / WID / "src" / "main.py").read_text() == "# the answer\na = 40\nb = 1\nprint(a + b)\n"


def test_python_and_the_shell_report_output_and_exit_codes(outputs):
    _, said = outputs
    assert said[6].strip() == "41"
    assert said[7] == "err\nout\n[exit code 7]"
