"""The flat interface: the model gets the staged `orspace-flat-v1` prompt
(`<stage>/prompts/<workspace_id>.txt`, every visible file of the workspace in one text) and answers
in one reply, in the format `orspace-reply-v1`, which is parsed into the workspace.

The reply format (`orspace-reply-v1`), stated to the model by `reply_instructions(mode)`:

```
<<<FILE src/model.py>>>
import pulp
...
<<<END src/model.py>>>

<<<ANSWER>>>
The binding constraint is ...
<<<END ANSWER>>>
```

- A file block opens with a line that is exactly `<<<FILE <path>>>>` and ends at the first later
  line that is exactly `<<<END <path>>>>` (same path); everything between is the file's text,
  verbatim (a body may hold other marker lines: only its own END line closes it). A body that is
  wholly wrapped in one Markdown code fence (a first line of three backticks with an optional
  language, a last line of three backticks) loses those two lines. Trailing white space on marker
  lines is ignored.
- Paths are relative POSIX paths from the workspace root, as in the prompt, and must lie under the
  mode's submission folder: `src/` for Build, `revised/src/` for Revise. An absolute path, `..`, a
  backslash, an empty or `.` segment, a path given twice or one that would go through a link is
  refused.
- Build and Revise replies hold one or more file blocks (the program the judge runs: `src/main.py`,
  `src/solve.py`, `src/model.py`, ... or a `submission.yaml` inside the submission folder, see
  docs/orspace.md); Explain replies hold exactly one answer block (`<<<ANSWER>>>` ...
  `<<<END ANSWER>>>`), the answer `explain-score` reads (`answers.jsonl` row
  `{"workspace_id", "answer"}`). A block of the other kind is refused.
- Text outside blocks (the model's commentary) is ignored.
- The parser also reads the same blocks in a Markdown spelling (models often answer in Markdown;
  the instructions show the marker spelling only): a line `### FILE: <path>` (any heading level,
  the path optionally in backticks) followed by one fenced code block (three or more backticks or
  tildes; it ends at a fence line of the same character at least as long), `### ANSWER` followed
  by one fenced block holding the answer, or `### ANSWERS` followed by one fenced block of JSONL
  rows as `explain-score --answers` reads them (`{"workspace_id", "answer"}`: exactly one row, for
  this workspace). The headings are upper case and stand alone (`### Answer`, `### File: notes`
  are commentary); a heading not followed by a closed fence is a parse error. Both spellings may
  be mixed in one reply.

A reply that breaks any rule is a **parse error**: nothing is written, the sample's stop reason is
`parse_error` with the reason, and the raw reply is kept (the transcript, and `flat_reply_file`
when the sample names one): never an empty submission passed off as the model's.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from inspect_ai.solver import Solver, solver

from tcsexam.agents.accounting import (
    STORE_ANSWER,
    STORE_ERROR,
    STORE_FILES,
    STORE_REPLY_FORMAT,
    STORE_STOP_REASON,
    StopReason,
)
from tcsexam.fileio import JsonObject, atomic_write_bytes, atomic_write_text
from tcsexam.orspace import flat as flat_format
from tcsexam.orspace.execute import DEFAULT_TIME_LIMIT_S
from tcsexam.orspace.release import Mode

REPLY_FORMAT = "orspace-reply-v1"
#: where a mode's program goes (relative to the workspace root); Explain has none
SUBMISSION_FOLDERS: dict[str, str] = {Mode.BUILD.value: "src", Mode.REVISE.value: "revised/src"}
MAX_FILES = 200
#: Inspect's output stop reasons of a reply that ended before the model finished it
CUT_OFF = frozenset({"max_tokens", "model_length"})
MAX_REPLY_BYTES = 8 * 1024 * 1024

_OPEN_FILE = re.compile(r"^<<<FILE (.+?)>>>$")
_OPEN_ANSWER = "<<<ANSWER>>>"
_END_ANSWER = "<<<END ANSWER>>>"
_FENCE_OPEN = re.compile(r"^```[A-Za-z0-9_+.-]*$")
#: the Markdown spelling: `### FILE: <path>`, `### ANSWER`, `### ANSWERS` (then one fenced block)
_MD_HEADING = re.compile(r"^#{1,6}[ \t]*(?:(FILE):[ \t]*(`?[^\s`]+`?)|(ANSWERS|ANSWER):?)[ \t]*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})[A-Za-z0-9_+.-]*$")


class ReplyError(ValueError):
    """A flat reply that does not follow `orspace-reply-v1` (the message says where and why)."""


@dataclass
class FlatReply:
    files: dict[str, bytes] = field(default_factory=dict)  #: workspace-relative path -> contents
    answer: str | None = None


def workspace_question(prompt: str) -> str | None:
    """An Explain workspace's question as the flat prompt shows it (`metadata.json`'s
    `explain_task.question`, the release's place), else None."""
    try:
        files = flat_format.parse(prompt.encode("utf-8"))
        question = json.loads(files["metadata.json"])["explain_task"]["question"]
    except (ValueError, KeyError, TypeError):
        return None
    return question if isinstance(question, str) and question.strip() else None


def reply_instructions(mode: str, *, question: str | None = None, time_limit_s: float | None = None) -> str:
    """The text appended to the flat prompt: the task (as the filesystem agent is told it, without
    the tools) and the one reply format. `question`: an Explain workspace's question; `time_limit_s`:
    the judge's limit on the program."""
    mode = Mode(mode).value
    limit = DEFAULT_TIME_LIMIT_S if time_limit_s is None else time_limit_s
    if mode == Mode.EXPLAIN.value:
        task = (
            "You are an operations-research analyst. The workspace above holds the documents, data, "
            "formulations, logs and solver records of a model before (original/) and after (revised/) a "
            "revision. Answer its question"
            + (f":\n\nQuestion: {question}\n\n" if question else " (in metadata.json). ")
            + "Ground every claim in the workspace: name the files, variables, constraints and values you "
            "rely on, and quantify; do not invent numbers. Put the whole answer in one answer block:\n\n"
            f"{_OPEN_ANSWER}\n<your answer>\n{_END_ANSWER}\n\n"
            "Write no file blocks."
        )
    else:
        folder = SUBMISSION_FOLDERS[mode]
        what = (
            "builds the optimisation model the documents describe from the data files"
            if mode == Mode.BUILD.value
            else "models the revised requirements (revised/) starting from the current model (original/)"
        )
        task = (
            "You are an operations-research engineer. Write a program in "
            f"{folder}/ ({folder}/main.py) that {what} and solves it with PuLP (CBC), highspy, gurobipy "
            "or coptpy (all installed). Report the result: write the JSON object "
            '{"status": "Optimal", "objective": <number>} to the file named by the environment variable '
            "ORSPACE_RESULT_FILE (helpers: `from tcsexam.orspace.result import pulp_result, highs_result, "
            "write_result`), or print the lines `Status: Optimal` and `OBJECTIVE_VALUE: <number>`. "
            f"It will be run from {folder}/ as `python3 main.py` with a wall-clock limit of {limit:g} s and no "
            f"network; read the data with paths relative to {folder}/. Give every file as one file block:\n\n"
            f"<<<FILE {folder}/main.py>>>\n<the file's full text>\n<<<END {folder}/main.py>>>\n\n"
            f"Only files under {folder}/ are accepted; write no answer block."
        )
    return (
        f"\n\n# Your reply (format {REPLY_FORMAT})\n\n{task}\n\n"
        "Each marker stands alone on its line. Text outside the blocks is ignored; a reply without "
        "a well-formed block is recorded as a parse error."
    )


def _check_path(raw: str, mode: str, line: int) -> str:
    where = f"line {line}: file path {raw!r}"
    if "\\" in raw or "\x00" in raw:
        raise ReplyError(f"{where}: a path uses '/' and no backslash or NUL")
    if raw.startswith("/"):
        raise ReplyError(f"{where}: absolute paths are refused")
    parts = raw.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ReplyError(f"{where}: empty, '.' or '..' segments are refused")
    folder = SUBMISSION_FOLDERS[mode]
    if not PurePosixPath(raw).is_relative_to(folder) or raw == folder:
        raise ReplyError(f"{where}: {mode} files go under {folder}/")
    return raw


def _unfence(lines: list[str]) -> list[str]:
    if len(lines) >= 2 and _FENCE_OPEN.match(lines[0].strip()) and lines[-1].strip() == "```":
        return lines[1:-1]
    return lines


def _fenced(lines: list[str], i: int, heading: str) -> tuple[list[str], int]:
    """(body, index of the closing fence) of the fenced code block that must follow the Markdown
    heading on line i (blank lines may come between)."""
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    opened = _FENCE.match(lines[j].strip()) if j < len(lines) else None
    if not opened:
        raise ReplyError(f"line {i + 1}: {heading} is not followed by a fenced code block")
    fence = opened.group(1)
    for k in range(j + 1, len(lines)):
        close = lines[k].strip()
        if close and set(close) == {fence[0]} and len(close) >= len(fence):
            return lines[j + 1 : k], k
    raise ReplyError(f"line {j + 1}: the code block under {heading} is not closed by {fence}")


def _answer_rows(body: list[str], line: int, workspace_id: str | None) -> str:
    """The answer of an `### ANSWERS` block: JSONL rows as `explain-score --answers` reads them, one
    for this workspace."""
    rows = []
    for k, raw in enumerate(body):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError:
            raise ReplyError(f"line {line + k + 2}: an answers row is not JSON") from None
        if not (
            isinstance(row, dict) and isinstance(row.get("workspace_id"), str) and isinstance(row.get("answer"), str)
        ):
            raise ReplyError(f"line {line + k + 2}: an answers row needs string workspace_id and answer")
        rows.append(row)
    if len(rows) != 1:
        raise ReplyError(f"line {line + 1}: the answers block holds {len(rows)} rows; one is expected")
    if workspace_id is not None and rows[0]["workspace_id"] != workspace_id:
        raise ReplyError(f"line {line + 1}: the answers row is for {rows[0]['workspace_id']}, not {workspace_id}")
    answer: str = rows[0]["answer"]  # (a string: checked above)
    return answer


def _add_file(reply: FlatReply, raw: str, body: list[str], mode: str, line: int) -> None:
    if mode == Mode.EXPLAIN.value:
        raise ReplyError(f"line {line}: an Explain reply holds one answer block and no file blocks")
    path = _check_path(raw, mode, line)
    if path in reply.files:
        raise ReplyError(f"line {line}: file {path} is given twice")
    reply.files[path] = ("\n".join(body) + "\n").encode("utf-8", "surrogatepass")
    if len(reply.files) > MAX_FILES:
        raise ReplyError(f"more than {MAX_FILES} files")


def _add_answer(reply: FlatReply, answer: str, mode: str, line: int) -> None:
    if mode != Mode.EXPLAIN.value:
        raise ReplyError(f"line {line}: a {mode} reply holds file blocks and no answer block")
    if reply.answer is not None:
        raise ReplyError(f"line {line}: a second answer block")
    reply.answer = answer.strip()
    if not reply.answer:
        raise ReplyError(f"line {line}: the answer block is empty")


def parse_reply(text: str, mode: str, workspace_id: str | None = None) -> FlatReply:
    """The files and answer of a reply in `orspace-reply-v1`, either spelling (ReplyError when it
    breaks a rule). `workspace_id`: checked against an `### ANSWERS` row."""
    mode = Mode(mode).value
    if not text.strip():
        raise ReplyError("the reply is empty")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_REPLY_BYTES:
        raise ReplyError(f"the reply is larger than {MAX_REPLY_BYTES} bytes")
    lines = text.replace("\r\n", "\n").split("\n")
    reply = FlatReply()
    i = 0
    while i < len(lines):
        marker = lines[i].rstrip()
        opened = _OPEN_FILE.match(marker)
        heading = _MD_HEADING.match(marker.strip())
        if opened or marker == _OPEN_ANSWER:
            end = f"<<<END {opened.group(1)}>>>" if opened else _END_ANSWER
            try:
                close = next(j for j in range(i + 1, len(lines)) if lines[j].rstrip() == end)
            except StopIteration:
                raise ReplyError(f"line {i + 1}: {marker} has no {end} line") from None
            body = _unfence(lines[i + 1 : close])
            if opened:
                _add_file(reply, opened.group(1), body, mode, i + 1)
            else:
                _add_answer(reply, "\n".join(body), mode, i + 1)
            i = close + 1
            continue
        if heading:
            kind, raw = heading.group(1) or heading.group(3), (heading.group(2) or "").strip("`")
            body, close = _fenced(lines, i, marker.strip())
            if kind == "FILE":
                _add_file(reply, raw, body, mode, i + 1)
            elif kind == "ANSWER":
                _add_answer(reply, "\n".join(body), mode, i + 1)
            else:
                _add_answer(reply, _answer_rows(body, i, workspace_id), mode, i + 1)
            i = close + 1
            continue
        if marker.startswith("<<<END "):
            raise ReplyError(f"line {i + 1}: {marker} closes no open block")
        i += 1
    if mode == Mode.EXPLAIN.value and reply.answer is None:
        raise ReplyError(f"no answer block ({_OPEN_ANSWER} ... {_END_ANSWER}) in the reply")
    if mode != Mode.EXPLAIN.value and not reply.files:
        raise ReplyError(f"no file block (<<<FILE {SUBMISSION_FOLDERS[mode]}/<name>>>> ... <<<END ...>>>) in the reply")
    return reply


def _no_link_below(root: Path, rel: str) -> None:
    """Refuse a target whose existing components below `root` are links or not folders."""
    current = root
    parts = PurePosixPath(rel).parts
    for k, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise ReplyError(f"file path {rel!r}: {current.relative_to(root)} is a link; refused")
        last = k == len(parts) - 1
        if not last and not stat.S_ISDIR(info.st_mode):
            raise ReplyError(f"file path {rel!r}: {current.relative_to(root)} is not a folder")
        if last and not stat.S_ISREG(info.st_mode):
            raise ReplyError(f"file path {rel!r}: {current.relative_to(root)} exists and is not a regular file")


def apply_reply(reply: FlatReply, workspace_dir: str | os.PathLike, mode: str) -> list[str]:
    """Write the reply's files into the workspace (all checked before any is written); returns the
    written relative paths. Explain replies write nothing (the answer goes to answers.jsonl)."""
    mode = Mode(mode).value
    root = Path(workspace_dir)
    if mode == Mode.EXPLAIN.value:
        return []
    if os.path.islink(root) or not root.is_dir():
        raise FileNotFoundError(f"workspace folder {root} is missing")
    for rel in reply.files:
        _check_path(rel, mode, 0)
        _no_link_below(root, rel)
    for rel, data in sorted(reply.files.items()):
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        _no_link_below(root, rel)  # nothing became a link while the folders were made
        atomic_write_bytes(target, data)
    return sorted(reply.files)


def flat_solver() -> Solver:
    """The Inspect solver of the flat interface: the sample's input is the staged flat prompt; the
    solver appends `reply_instructions(mode)`, asks the model once (no tools), parses the reply and
    writes it into the sample's workspace.

    Sample metadata: `mode` (build|revise|explain), `workspace_dir` (the output copy of the
    workspace the files go into; Build and Revise), optionally `program_time_limit_s` (the judge's
    limit on the program, told to the model) and `flat_reply_file` (where the raw reply is kept,
    written whatever the outcome). An Explain workspace's question (metadata.json
    `explain_task.question`, read from the prompt) is repeated in the instructions. Store keys set: `tcsexam:stop_reason`
    (`answered` or `parse_error`), `tcsexam:error` (the parse error), `tcsexam:files`,
    `tcsexam:answer` (Explain), `tcsexam:reply_format`."""

    @solver(name="tcsexam_flat")
    def _flat():
        async def solve(state, generate):
            meta: JsonObject = state.metadata or {}
            mode = Mode(meta["mode"]).value
            prompt = state.user_prompt.text
            question = workspace_question(prompt) if mode == Mode.EXPLAIN.value else None
            limit = meta.get("program_time_limit_s")
            state.user_prompt.text = prompt + reply_instructions(mode, question=question, time_limit_s=limit)
            state.store.set(STORE_REPLY_FORMAT, REPLY_FORMAT)
            state = await generate(state)
            text = state.output.completion if state.output else ""
            if meta.get("flat_reply_file"):
                atomic_write_text(meta["flat_reply_file"], text)
            try:
                reply = parse_reply(text, mode, meta.get("workspace_id"))
                written = []
                if mode != Mode.EXPLAIN.value:
                    written = apply_reply(reply, meta["workspace_dir"], mode)
            except ReplyError as exc:
                cut = state.output.stop_reason if state.output else None
                why = f"{exc} (the reply was cut off: {cut})" if cut in CUT_OFF else str(exc)
                state.store.set(STORE_STOP_REASON, StopReason.PARSE_ERROR.value)
                state.store.set(STORE_ERROR, why)
            else:
                state.store.set(STORE_STOP_REASON, StopReason.ANSWERED.value)
                state.store.set(STORE_FILES, written)
                if reply.answer is not None:
                    state.store.set(STORE_ANSWER, reply.answer)
            state.completed = True
            return state

        return solve

    return _flat()
