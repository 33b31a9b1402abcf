"""The agent's tools, declared to the model in the standard function-calling form (a name, a
description and a JSON schema of the arguments, from each function's signature and docstring):

- `bash(command)`: one shell command line (`bash -c`), run in the sample's sandbox from the
  workspace folder;
- `python(code)`: a Python program (the workspace's interpreter, with the four solvers) on stdin;
- `text_editor(command, path, ...)`: view a file or folder, create a file, replace a unique
  string, insert lines (the schema of Inspect's own `text_editor`, implemented on the sandbox's
  confined `read_file`/`write_file`, so it needs no helper program inside the sandbox);
- `submit(answer)`: the ReAct agent's end of the task; the answer is kept in the sample's store
  (`STORE_ANSWER`: an Explain answer) and marks the sample `submitted` (`STORE_STOP_REASON`).

Every call of `bash` and `python` runs under the sandbox's per-call limits; a limit reached, an
exit code and a sandbox refusal appear in the tool's output, so the transcript shows them.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import ExecResult, sandbox, store

from tcsexam.agents.accounting import STORE_ANSWER, STORE_STOP_REASON, StopReason
from tcsexam.agents.sandboxenv import NOTE

#: what a call's output shows at most (under Inspect's 16 KiB cut, which would drop the notes)
SHOWN_CHARS = 12000
VIEW_LINES = 2000  #: lines `text_editor view` shows of a file without a range
LIST_ENTRIES = 500  #: entries `text_editor view` lists of a folder


def _shown(result: ExecResult[str]) -> str:
    """A call's result as the model sees it: stderr, stdout (the middle left out past `SHOWN_CHARS`),
    then the sandbox's notes (a limit that stopped the command) and the exit code when not 0."""
    notes = [line for line in result.stderr.splitlines() if line.startswith(NOTE)]
    stderr = "\n".join(line for line in result.stderr.splitlines() if not line.startswith(NOTE))
    text = f"{stderr}\n{result.stdout}" if stderr.strip() else result.stdout
    if len(text) > SHOWN_CHARS:
        head, tail = text[: SHOWN_CHARS // 2], text[-SHOWN_CHARS // 3 :]
        text = f"{head}\n[... {len(text) - len(head) - len(tail)} characters left out ...]\n{tail}"
    tail_lines = [*notes, *([f"[exit code {result.returncode}]"] if result.returncode != 0 else [])]
    text = "\n".join([text.rstrip(), *tail_lines]) if tail_lines else text
    return text if text.strip() else "[no output]"


@tool(name="bash")
def bash_tool() -> Tool:
    """A shell command line in the workspace (the project's sandbox, per-call limits)."""

    async def execute(command: str) -> str:
        """Run a bash command line in the workspace folder (the current directory) and return its output.

        Each call starts a fresh shell in the workspace folder; files persist between calls,
        processes do not (everything a call starts ends with it). There is no network.

        Args:
          command: The bash command line to run.

        Returns:
          The command's standard error and standard output, and its exit code when not 0.
        """
        return _shown(await sandbox().exec(["bash", "-c", command]))

    return execute


@tool(name="python")
def python_tool() -> Tool:
    """A Python program run in the workspace (the project's sandbox, per-call limits)."""

    async def execute(code: str) -> str:
        """Run a Python program in the workspace folder and return what it prints.

        The interpreter has PuLP (with CBC), highspy, gurobipy and coptpy. Each call is a fresh
        process: print() what you want to see; nothing is kept between calls except files.

        Args:
          code: The Python source code to run.

        Returns:
          The program's standard error and standard output, and its exit code when not 0.
        """
        return _shown(await sandbox().exec(["python3", "-"], input=code))

    return execute


async def _read(path: str) -> str:
    try:
        return await sandbox().read_file(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise ToolError(f"{path}: {exc}") from None


async def _write(path: str, text: str) -> None:
    try:
        await sandbox().write_file(path, text)
    except (IsADirectoryError, PermissionError, OSError) as exc:
        raise ToolError(f"{path}: {exc}") from None


async def _view(path: str, view_range: list[int] | None) -> str:
    try:
        text = await sandbox().read_file(path)
    except IsADirectoryError:
        listing = await sandbox().exec(["find", path or ".", "-maxdepth", "2", "-not", "-path", "*/.*"])
        lines = listing.stdout.splitlines()[:LIST_ENTRIES]
        return "\n".join(lines) if listing.success else _shown(listing)
    except (FileNotFoundError, PermissionError, UnicodeDecodeError) as exc:
        raise ToolError(f"{path}: {exc}") from None
    lines = text.splitlines()
    start, end = 1, min(len(lines), VIEW_LINES)
    if view_range:
        if len(view_range) != 2:
            raise ToolError("view_range must be [start_line, end_line]")
        start, end = view_range[0], len(lines) if view_range[1] == -1 else view_range[1]
        if not 1 <= start <= max(end, 1) or end > len(lines):
            raise ToolError(f"view_range {view_range} is outside the file's {len(lines)} lines")
    shown = [f"{n:6}\t{line}" for n, line in enumerate(lines[start - 1 : end], start)]
    more = f"\n[{len(lines) - end} more lines: use view_range]" if end < len(lines) and not view_range else ""
    return "\n".join(shown) + more


@tool(name="text_editor")
def text_editor_tool() -> Tool:
    """View, create and edit files of the workspace."""

    async def execute(
        command: Literal["view", "create", "str_replace", "insert"],
        path: str,
        file_text: str | None = None,
        insert_line: int | None = None,
        new_str: str | None = None,
        old_str: str | None = None,
        view_range: list[int] | None = None,
    ) -> str:
        """View, create and edit files of the workspace (paths relative to the workspace folder).

        Args:
          command: `view` (a file with line numbers, or a folder's entries), `create` (write `file_text` to `path`, replacing it), `str_replace` (replace the one occurrence of `old_str` by `new_str`), `insert` (insert `new_str` after line `insert_line`, 0 for the top).
          path: The file or folder, relative to the workspace folder.
          file_text: The content of the file to create (`create`).
          insert_line: The line after which `new_str` is inserted (`insert`).
          new_str: The new text (`str_replace`, `insert`).
          old_str: The text to replace; it must occur exactly once (`str_replace`).
          view_range: [start_line, end_line] of the file to show (`view`; end -1: to the end).

        Returns:
          The file or folder (`view`), or what was done.
        """
        if command == "view":
            return await _view(path, view_range)
        if command == "create":
            if file_text is None:
                raise ToolError("create needs file_text")
            await _write(path, file_text)
            return f"wrote {path} ({len(file_text.splitlines())} lines)"
        if command == "str_replace":
            if not old_str:
                raise ToolError("str_replace needs old_str")
            text = await _read(path)
            count = text.count(old_str)
            if count != 1:
                raise ToolError(f"old_str occurs {count} times in {path}; it must occur exactly once")
            await _write(path, text.replace(old_str, new_str or "", 1))
            return f"replaced one occurrence in {path}"
        if command == "insert":
            if insert_line is None or new_str is None:
                raise ToolError("insert needs insert_line and new_str")
            lines = (await _read(path)).splitlines(keepends=True)
            if not 0 <= insert_line <= len(lines):
                raise ToolError(f"insert_line {insert_line} is outside 0..{len(lines)}")
            block = new_str if new_str.endswith("\n") else new_str + "\n"
            if lines and not lines[-1].endswith("\n") and insert_line == len(lines):
                block = "\n" + block
            await _write(path, "".join([*lines[:insert_line], block, *lines[insert_line:]]))
            return f"inserted {len(block.splitlines())} lines after line {insert_line} of {path}"
        raise ToolError(f"unknown command {command!r} (view, create, str_replace, insert)")

    return execute


@tool(name="submit")
def submit_tool() -> Tool:
    """The end of the task (the ReAct agent's submit)."""

    async def execute(answer: str) -> str:
        """Submit your work and end the task.

        Args:
          answer: Your final answer (Explain: the full answer to the question; Build and Revise: a short summary of your program).

        Returns:
          The answer as submitted.
        """
        store().set(STORE_ANSWER, answer)
        store().set(STORE_STOP_REASON, StopReason.SUBMITTED.value)
        return answer

    return execute


def workspace_tools() -> list[Tool]:
    """The filesystem interface's tools (submit is the agent's own: `submit_tool`)."""
    return [bash_tool(), python_tool(), text_editor_tool()]
