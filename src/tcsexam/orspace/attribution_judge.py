"""The attribution judge (docs/orspace.md "Failure attribution"): for a failed Build/Revise result
that the deterministic evidence leaves `unknown`, a judge model reads the requirements, the
program, the evidence gathered and the reference models with their readings, and names one of
`grounding`, `modelling`, `invented_constraint` or `unknown` with a short reason.

The call goes through the Explain judge's client (`judge.JudgeClient.ask`: the `openai` client,
its retries, cache and cost), with a prompt of its own (`PROMPT_VERSION`, its sha256 on every
row). The reply must be one JSON object `{"attribution": ..., "reason": ...}`; anything else is
retried and, after the last attempt, an error. An error (provider or reply) leaves the row
`unknown` with the error named: a failure of the judge is never the model's.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from tcsexam.fileio import Json, JsonObject
from tcsexam.orspace.attribution import Attribution
from tcsexam.orspace.judge import BudgetExceeded, JudgeClient, JudgeError

PROMPT_VERSION = "orspace-attribution-v1"
#: what the judge may answer (execution is the record's, never the judge's)
JUDGED = (Attribution.GROUNDING, Attribution.MODELLING, Attribution.INVENTED_CONSTRAINT, Attribution.UNKNOWN)
#: characters of one file, and of all files of one kind, put in front of the judge
MAX_FILE_CHARS = 20_000
MAX_KIND_CHARS = 60_000
TEXT_SUFFIXES = (".md", ".txt", ".tex", ".rst")
DATA_SUFFIXES = (".csv", ".json")
SOURCE_SUFFIXES = (".py",)

SYSTEM_PROMPT = f"""\
You attribute the failure of an optimisation program written for an OR-Space Build or Revise
task. The program ran and did not reproduce the task's reference optimum. Deterministic checks
have already been run and could not decide why; their findings are given as "evidence".

You receive one JSON object with:
- "task": workspace id, mode, the program's status and objective, the reference objective and the
  relative tolerance, and the failure mode;
- "requirements": the task's documents (what the business asks for), by file;
- "data": the task's data files (possibly cut), by file;
- "program": the program's source files, by file;
- "run": what the run left (message, output tails, the files the program opened);
- "evidence": the deterministic checks' findings (data files read or not, data values hard-coded
  or changed, other readings' optima);
- "reference_models": the project's models of the requirements, each with the reading it encodes,
  its optimum and its source, and the release's reference value.

Choose exactly one attribution:
- "grounding": the program does not use the data the requirements name, or uses numbers that
  differ from it (hard-coded, changed, read from the wrong column or file);
- "modelling": the program is grounded, but its objective or a constraint the requirements ask for
  is wrong or missing (compared with the requirements and the reference models);
- "invented_constraint": the program is grounded and its model is otherwise right, but it adds a
  constraint the requirements do not ask for, and that constraint changes the optimum;
- "unknown": the material does not let you decide.

Prefer "unknown" to a guess. Reply with ONE JSON object and nothing else, exactly of this form:
{{"attribution": "{'" | "'.join(JUDGED)}", "reason": "one to three sentences naming the
lines, values or constraints that decide it"}}
"""
PROMPT_SHA256 = hashlib.sha256(SYSTEM_PROMPT.encode("utf-8")).hexdigest()

REPLY_SCHEMA: JsonObject = {
    "type": "object",
    "required": ["attribution", "reason"],
    "properties": {
        "attribution": {"enum": [a.value for a in JUDGED]},
        "reason": {"type": "string", "minLength": 1},
    },
}


def validate_reply(reply: Json) -> None:
    """Raise ValueError with a one-line reason when the reply is not an attribution."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(REPLY_SCHEMA).iter_errors(reply), key=lambda e: e.path)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "reply"
        raise ValueError(f"{where}: {errors[0].message}")


def _files(root: Path, folder: str, suffixes: tuple[str, ...]) -> dict[str, str]:
    """{relative path: text (cut at MAX_FILE_CHARS)} of the files under root/folder, at most
    MAX_KIND_CHARS in all (later files are named with an empty text)."""
    base = root / folder
    out: dict[str, str] = {}
    if not base.is_dir():
        return out
    total = 0
    for path in sorted(p for p in base.rglob("*") if p.is_file() and p.suffix.lower() in suffixes):
        rel = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + f"\n[... cut: {len(text)} characters in all]"
        if total + len(text) > MAX_KIND_CHARS:
            out[rel] = "[left out: the material's size limit is reached]"
            continue
        total += len(text)
        out[rel] = text
    return out


def reading_of(path: Path) -> str | None:
    """The module-level `READING` string of a reference model (refmodel.py), else None."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "READING" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def reference_models(answers: list[tuple[float, str]] | None, reference: float) -> JsonObject:
    """The release's reference value and every evidenced reading's model: file, reading, optimum
    and source (cut), from the audit's evidenced answers of the item."""
    models = []
    for value, source in answers or []:
        if source == "reference":
            continue
        path = Path(source)
        text = None
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS]
        models.append({"file": source, "reading": reading_of(path), "objective": value, "source": text})
    return {"release_reference": reference, "models": models}


def judge_payload(
    row: JsonObject,
    root: Path,
    record: JsonObject | None,
    evidence: JsonObject,
    answers: list[tuple[float, str]] | None,
) -> JsonObject:
    """What the judge reads for one unknown row (`root`: the submission's task root)."""
    record = record or {}
    return {
        "task": {
            "workspace_id": row["workspace_id"],
            "mode": row["mode"],
            "status": row.get("status"),
            "objective": row.get("objective"),
            "reference_objective": row["reference_objective"],
            "relative_tolerance": row["relative_tolerance"],
            "failure_mode": row["failure_mode"],
        },
        "requirements": _files(root, "docs", TEXT_SUFFIXES),
        "data": _files(root, "data", DATA_SUFFIXES),
        "program": _files(root, "src", SOURCE_SUFFIXES),
        "run": {
            "message": record.get("message"),
            "stdout_tail": (record.get("stdout_tail") or "")[-4000:],
            "stderr_tail": (record.get("stderr_tail") or "")[-4000:],
            "files_read": record.get("files_read"),
        },
        "evidence": evidence,
        "reference_models": reference_models(answers, row["reference_objective"]),
    }


class AttributionJudge:
    """`attribution.attribute_rows`' judge: asks a `JudgeClient` about one unknown row."""

    def __init__(self, client: JudgeClient):
        self.client = client

    def __call__(
        self,
        row: JsonObject,
        root: Path,
        record: JsonObject | None,
        evidence: JsonObject,
        answers: list[tuple[float, str]] | None,
    ) -> tuple[Attribution, JsonObject]:
        return ask(self.client, judge_payload(row, root, record, evidence, answers))


def ask(judge: JudgeClient, payload: JsonObject) -> tuple[Attribution, JsonObject]:
    """The judge's attribution and its record: model, prompt, reason, raw reply, usage; on a
    failure (`JudgeError`) `unknown` with the error named. `BudgetExceeded` is raised."""
    entry: JsonObject = {"model": judge.model, "prompt_version": PROMPT_VERSION, "prompt_sha256": PROMPT_SHA256}
    try:
        reply = judge.ask(payload, system_prompt=SYSTEM_PROMPT, prompt_version=PROMPT_VERSION, validate=validate_reply)
    except BudgetExceeded:
        raise
    except JudgeError as exc:
        return Attribution.UNKNOWN, {**entry, "error": str(exc), "raw": judge.last_raw}
    verdict = Attribution(reply["attribution"])
    return verdict, {
        **entry,
        "attribution": verdict,
        "reason": reply["reason"],
        "raw": judge.last_raw,
        "usage": judge.last_usage,
    }
