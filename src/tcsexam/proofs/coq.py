"""What Coq (8.16) prints, read back: `Print Assumptions`, `Print Libraries`, `Locate`, and
coqchk's `-o` context summary; the harness-written check files that make it print them.

Everything the harness decides from is printed between two marker lines carrying a fresh random
nonce, so text the submission makes Coq print elsewhere cannot pose as the check's output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache

#: the logical roots of the harness's libraries: the task's statement and the submission
TASK_ROOT, TASK_LIB = "TCSExam", "Task"
SUBMISSION_ROOT, SUBMISSION_LIB = "TCSExamSubmission", "Proof"
TASK_MODULE = f"{TASK_ROOT}.{TASK_LIB}"
SUBMISSION_MODULE = f"{SUBMISSION_ROOT}.{SUBMISSION_LIB}"
#: Print Assumptions' wording of each way a kernel check was bypassed (Coq's printer, 8.16)
UNSAFE = {
    "is assumed to be guarded.": "guard checking disabled",
    "is assumed to be positive.": "positivity checking disabled",
    "relies on an unsafe hierarchy.": "universe checking disabled",
    "relies on definitional UIP.": "definitional UIP",
    "relies on indices not mattering.": "indices not mattering",
}


#: the one line for a machine without Coq: the cause, what follows, the fix (make setup-coq runs
#: the system's package manager as root or through sudo, or says what to run: Makefile)
NOT_INSTALLED = (
    "coqc is not installed on this machine: theorem and open-conjecture proofs cannot be checked "
    "(their rows are judge_failed and the Index incomplete until they are); fix: make setup-coq "
    "(Debian/Ubuntu: sudo apt-get install coq)"
)


@cache
def coqc_version(coqc: str = "coqc") -> str:
    """coqc's version ("8.16.1"), or "" when it cannot be run here."""
    exe = shutil.which(coqc)
    if exe is None:
        return ""
    try:
        out = subprocess.run([exe, "--print-version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.split()[0] if out.split() else ""


def version_matches(required: str, have: str) -> bool:
    """Whether `have` (8.16.1) is the release `required` names (8.16, 8.16.1; "" any)."""
    if not required:
        return True
    return have.split(".")[: len(required.split("."))] == required.split(".")


def marker(nonce: str, what: str) -> str:
    return f"__tcsexam_{nonce}_{what}"


def check_file(statement: str, theorem: str, nonce: str) -> str:
    """The check file: the statement's type fixed from the task's library *before* the submission
    is loaded (no name of the submission can shadow it), then the submission's theorem at that
    type (the kernel compares the elaborated types), its assumptions and the loaded libraries.
    Printing options a submission may have set globally are reset before anything is printed."""
    begin, mid, end = (marker(nonce, w) for w in ("begin", "mid", "end"))
    return (
        f"Require {TASK_MODULE}.\n"
        f"Definition __tcsexam_statement : Prop := {TASK_MODULE}.{statement}.\n"
        f"Require {SUBMISSION_MODULE}.\n"
        f"Definition __tcsexam_check : __tcsexam_statement := {SUBMISSION_MODULE}.{theorem}.\n"
        "Unset Printing All.\nSet Printing Width 1000.\n"
        f"Definition {begin} := tt.\nPrint {begin}.\n"
        "Print Assumptions __tcsexam_check.\n"
        f"Definition {mid} := tt.\nPrint {mid}.\n"
        "Print Libraries.\n"
        f"Definition {end} := tt.\nPrint {end}.\n"
    )


def locate_file(base_check: str, names: list[str], nonce: str) -> str:
    """The check file again, followed by `Locate` of each printed assumption name (its full name)."""
    lines = [base_check]
    for i, name in enumerate(names):
        tag = marker(nonce, f"loc{i}")
        lines.append(f"Definition {tag} := tt.\nPrint {tag}.\nLocate {name}.\n")
    tag = marker(nonce, "locend")
    lines.append(f"Definition {tag} := tt.\nPrint {tag}.\n")
    return "".join(lines)


def between(text: str, nonce: str, first: str, second: str) -> str | None:
    """The lines printed between the markers `first` and `second` (None: a marker is missing)."""
    lines = text.splitlines()
    a = [i for i, line in enumerate(lines) if line.startswith(marker(nonce, first) + " ")]
    b = [i for i, line in enumerate(lines) if line.startswith(marker(nonce, second) + " ")]
    if len(a) != 1 or len(b) != 1 or b[0] < a[0]:
        return None
    # a marker's Print shows "name = tt" and then ": unit" on its own line
    return "\n".join(line for line in lines[a[0] + 1 : b[0]] if line.strip() != ": unit")


@dataclass
class Assumptions:
    closed: bool = False
    axioms: list[dict] = field(default_factory=list)  #: {"name", "type"} (printed names)
    unsafe: list[dict] = field(default_factory=list)  #: {"name", "why"}
    other: list[str] = field(default_factory=list)  #: section variables and anything unrecognised


_HEADERS = ("Axioms:", "Section Variables:", "Opaque constants:", "Transparent constants:")


def parse_assumptions(text: str) -> Assumptions:
    """Print Assumptions' output: "Closed under the global context", or headed sections
    ("Axioms:", "Section Variables:", ...) of entries, each starting at column 0 (continuation
    lines are indented)."""
    out = Assumptions()
    section = None
    entries: list[tuple[str | None, str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.strip() == "Closed under the global context":
            out.closed = True
            continue
        if line.strip() in _HEADERS:
            section = line.strip()[:-1]
            continue
        if line[0].isspace() and entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
        else:
            entries.append((section, line.strip()))
    for section, entry in entries:
        for suffix, why in UNSAFE.items():
            if entry.endswith(suffix):
                out.unsafe.append({"name": entry[: -len(suffix)].strip(), "why": why})
                break
        else:
            name, sep, typ = entry.partition(" : ")
            if section == "Axioms" and sep:
                out.axioms.append({"name": name.strip(), "type": typ.strip()})
            elif section == "Axioms" and entry.endswith(" :"):
                out.axioms.append({"name": entry[:-2].strip(), "type": ""})
            else:
                out.other.append(f"{section}: {entry}")
    return out


def parse_libraries(text: str) -> list[str]:
    """The logical names of `Print Libraries` ("Loaded library files:" then one per line)."""
    names = []
    for line in text.splitlines():
        word = line.strip()
        if not word or word.startswith("Loaded library files"):
            continue
        names.append(word)
    return names


def parse_locate(text: str, nonce: str, count: int) -> list[str | None]:
    """The full name `Locate` gives first for each of `count` names (None: not a constant)."""
    out: list[str | None] = []
    for i in range(count):
        nxt = f"loc{i + 1}" if i + 1 < count else "locend"
        chunk = between(text, nonce, f"loc{i}", nxt) or ""
        found = re.search(r"^\s*Constant\s+(\S+)", chunk, re.MULTILINE)
        out.append(found.group(1) if found else None)
    return out


@dataclass
class Summary:
    """coqchk -o's context summary of the libraries it checked."""

    found: bool = False
    predicative: bool = True
    axioms: list[str] = field(default_factory=list)
    type_in_type: list[str] = field(default_factory=list)
    unsafe_fix: list[str] = field(default_factory=list)
    positivity: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


_SECTIONS = {
    "Axioms": "axioms",
    "Constants/Inductives relying on type-in-type": "type_in_type",
    "Constants/Inductives relying on unsafe (co)fixpoints": "unsafe_fix",
    "Inductives whose positivity is assumed": "positivity",
}


def parse_coqchk(text: str) -> Summary:
    out = Summary()
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "CONTEXT SUMMARY")
    except StopIteration:
        return out
    out.found = True
    current = None
    for line in lines[start + 1 :]:
        s = line.strip()
        if not s or set(s) == {"="}:
            continue
        if s.startswith("* "):
            head, _, rest = s[2:].partition(":")
            if head == "Theory":
                out.predicative = "Set is predicative" in rest
                current = None
                continue
            current = _SECTIONS.get(head.strip())
            if current is None:
                out.other.append(s)
            rest = rest.strip()
            if rest and rest != "<none>" and current is not None:
                getattr(out, current).append(rest)
            continue
        if s == "<none>":
            continue
        if current is not None:
            getattr(out, current).append(s)
        elif "Set is impredicative" in s or "collapsed" in s:
            out.predicative = False
    return out
