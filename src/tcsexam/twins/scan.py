"""`tcsexam scan-candidate DIR --task T`: what in a candidate's files only memorisation explains.

The scan reads every file of the candidate folder as text (bounded: `MAX_FILES` files, the first
`MAX_BYTES` of each; nothing is executed or imported) except the agent stage's `generation.json` at
its top (the harness writes it beside an agent's submission, replacing any file of that name the
agent left: it holds paths, counts and ids, not the model's code), and reports, each with its file
and line:

- `instance_name`: a quoted string literal that is an instance name or file name of the task;
- `content_hash`: a hex literal that is (a prefix of at least 16 digits of) the sha256, sha1,
  md5, sha512, blake2b or blake2s digest of an instance file;
- `hash_table`: three or more hex digests (32, 40, 64 or 128 digits) in one file that also calls a
  hash function: a table keyed by content hashes of something (a normalised text, a canonical form);
- `best_value_literal`: an integer literal equal to a published best value of the task (the task
  file's best_known / optimal / chromatic / optimum) or to a reference outcome, when the file holds
  two or more distinct such values (numbers below 100 are left out: they are everywhere);
- `size_key`: a line holding an instance's two size numbers together ((vertices, edges),
  (variables, clauses)), or a file where three or more of the task's instance sizes (vertices,
  edges, variables, clauses, cities) are used as keys or compared with (`14:`, `== 48`,
  `case 52`): a table keyed by instance size;
- `embedded_certificate`: a literal that is certificate-shaped for an instance of the task: a
  run of 0/1 digits at least 64 long or as long as an instance, or a list of integers whose
  length is an instance's size and that is a permutation (a tour), a signed permutation (a
  model), a 0/1 vector (a cut) or, for colouring, a colour per vertex;
- `encoded_blob`: a base64 or hex string of 128 characters or more (packed answers);
- `opaque_file`: a binary file of the candidate (its content cannot be read by the scan).

A finding is evidence, not a verdict: the scan never runs the candidate and never fails a run. It
misses answers computed from an obfuscated or downloaded table; the twins are the other half
(docs/twins.md).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections import defaultdict
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.problems import get_problem
from tcsexam.scoring.generation import GENERATION_FILE
from tcsexam.scoring.reference import load_reference
from tcsexam.scoring.twins import FindingKind
from tcsexam.tasks import load_task

#: the version of scan.json (`tcsexam.formats`)
SCAN_SCHEMA_VERSION = 1

MAX_FILES = 2000
MAX_BYTES = 8 * 1024 * 1024
MAX_PER_KIND = 25  #: findings of one kind kept per file (the rest counted)
MIN_VALUE = 100
SKIP_DIRS = {".git", "__pycache__", ".mypy_cache", ".pytest_cache", "node_modules"}
HASHES = ("sha256", "sha1", "md5", "sha512", "blake2b", "blake2s")

_STRING = re.compile(r"""(?P<q>["'`])(?P<s>[^"'`\n\\]{1,200})(?P=q)""")
_INT = re.compile(r"(?<![\w.])-?\d{1,18}(?![\w.])")
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{16,128}(?![0-9A-Za-z])")
_BITS = re.compile(r"(?<![0-9])[01]{16,}(?![0-9])")
LONG_BITS = 64  #: a 0/1 run this long is a certificate whatever its length
_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{128,}")
_INT_LIST = re.compile(r"-?\d{1,9}(?:[ \t]*[,;]?[ \t\r\n]*-?\d{1,9}){9,}")
_KEY = re.compile(r"(?:(?<![\w.])(\d{1,9})\s*[:\)]\s*[\[\{\(\"'\w-])|(?:==\s*(\d{1,9})\b)|(?:\bcase\s+(\d{1,9})\b)")
_HASH_CALL = re.compile(r"\b(hashlib|sha256|sha1|md5|blake2|xxhash|crc32|hash\(|sha512|SHA256|MD5|digest)\b")


class _Knowledge:
    """What the task tells the scan: names, digests, best values, sizes."""

    def __init__(self, task, reference=None):
        self.names: set[str] = set()
        self.digests: dict[str, str] = {}  # hex digest -> instance
        self.values: dict[int, str] = {}  # value -> instance
        self.pairs: dict[tuple[int, int], str] = {}
        self.sizes: dict[int, str] = {}
        self.lengths: set[int] = set()
        problem = get_problem(task.problem)
        self.problem = task.problem
        for inst in task.instances:
            self.names.update({inst.name, inst.path.name, inst.path.stem})
            try:
                data = inst.path.read_bytes()
            except OSError:
                data = None
            if data is not None:
                for algo in HASHES:
                    self.digests[hashlib.new(algo, data).hexdigest()] = inst.name
            for key in ("best_known", "optimal", "chromatic", "optimum"):
                v = inst.meta.get(key)
                if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
                    if abs(v) >= MIN_VALUE:
                        self.values[int(v)] = inst.name
            if data is not None:
                try:
                    parsed = problem.parse_instance(inst.path)
                except Exception:  # noqa: BLE001 - a broken instance only loses its sizes
                    parsed = None
                for a, b in (("n", "m"), ("nvars", "nclauses"), ("n", "m_lines")):
                    x, y = getattr(parsed, a, None), getattr(parsed, b, None)
                    if isinstance(x, int) and isinstance(y, int) and y >= 10:
                        self.pairs[(x, y)] = inst.name
                for a in ("n", "nvars", "m", "m_lines", "nclauses"):  # keys: any size number
                    x = getattr(parsed, a, None)
                    if isinstance(x, int) and x >= 10:
                        self.sizes.setdefault(x, inst.name)
                for a in ("n", "nvars"):  # a certificate has one entry per vertex, city or variable
                    x = getattr(parsed, a, None)
                    if isinstance(x, int) and x >= 10:
                        self.lengths.add(x)
        if reference is not None and task.id in reference.tasks:
            rt = reference.tasks[task.id]
            for name, outcomes in {**rt.instances, **rt.unscored}.items():
                for v in outcomes:
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
                        if abs(v) >= MIN_VALUE:
                            self.values.setdefault(int(v), name)
        self.names = {n for n in self.names if n}


def _files(folder: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for f in sorted(filenames):
            p = Path(dirpath) / f
            if f == GENERATION_FILE and Path(dirpath) == folder:
                continue  # the harness's record beside an agent's submission (module doc)
            if p.is_symlink() or not p.is_file():
                continue
            out.append(p)
            if len(out) >= MAX_FILES:
                return out
    return out


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def _certificate_shape(values: list[int], sizes: set[int], problem: str = "") -> str | None:
    k = len(values)
    if k not in sizes:
        return None
    s = set(values)
    if s <= {0, 1}:
        return "0/1 vector (a cut or an assignment)"
    if problem == "coloring" and len(s) >= 2 and min(s) >= 0 and max(s) < k:
        return "a colour per vertex (a colouring)"
    if sorted(values) == list(range(1, k + 1)) or sorted(values) == list(range(k)):
        return "permutation (a tour)"
    if sorted(abs(v) for v in values) == list(range(1, k + 1)):
        return "signed permutation (a model)"
    return None


def scan_text(rel: str, text: str, know: _Knowledge, hashing_anywhere: bool) -> list[JsonObject]:
    starts = _line_starts(text)
    found: list[JsonObject] = []

    def add(kind: str, offset: int, detail: str) -> None:
        found.append({"kind": kind, "file": rel, "line": _line(starts, offset), "detail": detail})

    for m in _STRING.finditer(text):
        s = m.group("s")
        if s in know.names:
            add(FindingKind.INSTANCE_NAME, m.start(), f"string literal {s!r} is an instance name of the task")
    hexes = []
    for m in _HEX.finditer(text):
        h = m.group(0).lower()
        if len(h) in (32, 40, 64, 128):
            hexes.append(m)
        match = next((d for d in know.digests if d.startswith(h)), None) if len(h) >= 16 else None
        if match is not None:
            add(
                FindingKind.CONTENT_HASH,
                m.start(),
                f"hex literal {h[:16]}... is a digest of instance {know.digests[match]}'s file",
            )
    if len(hexes) >= 3 and (hashing_anywhere or _HASH_CALL.search(text)):
        for m in hexes:
            add(
                FindingKind.HASH_TABLE,
                m.start(),
                f"one of {len(hexes)} hex digests in a file that hashes: {m.group(0)[:16]}...",
            )
    ints = [(int(m.group(0)), m.start()) for m in _INT.finditer(text)]
    hits = [(v, off) for v, off in ints if v in know.values]
    if len({v for v, _ in hits}) >= 2:
        for v, off in hits:
            add(
                FindingKind.BEST_VALUE_LITERAL,
                off,
                f"{v} is a published best value or reference outcome of instance {know.values[v]}",
            )
    by_line: dict[int, set[int]] = defaultdict(set)
    for v, off in ints:
        by_line[_line(starts, off)].add(v)
    for line, vals in sorted(by_line.items()):
        for (a, b), name in know.pairs.items():
            if a in vals and b in vals and a != b:
                found.append(
                    {
                        "kind": FindingKind.SIZE_KEY,
                        "file": rel,
                        "line": line,
                        "detail": f"the sizes ({a}, {b}) of instance {name} on one line",
                    }
                )
    keys = []
    for m in _KEY.finditer(text):
        v = int(next(g for g in m.groups() if g is not None))
        if v in know.sizes:
            keys.append((v, m.start()))
    if len({v for v, _ in keys}) >= 3:
        for v, off in keys:
            add(
                FindingKind.SIZE_KEY,
                off,
                f"instance size {v} (instance {know.sizes[v]}) used as a key or compared with",
            )
    sizes = know.lengths
    for m in _BITS.finditer(text):
        k = len(m.group(0))
        if k >= LONG_BITS or k in sizes:
            add(FindingKind.EMBEDDED_CERTIFICATE, m.start(), f"a run of {k} 0/1 digits")
    for m in _INT_LIST.finditer(text):
        values = [int(x) for x in re.findall(r"-?\d+", m.group(0))]
        shape = _certificate_shape(values, sizes, know.problem)
        if shape is not None:
            add(
                FindingKind.EMBEDDED_CERTIFICATE,
                m.start(),
                f"a list of {len(values)} integers shaped like a certificate: {shape}",
            )
    for m in _BLOB.finditer(text):
        if not _BITS.fullmatch(m.group(0)):
            add(FindingKind.ENCODED_BLOB, m.start(), f"an encoded string of {len(m.group(0))} characters")
    return found


def scan_candidate(folder: str | Path, task_spec: str | Path, reference: str | None = None) -> JsonObject:
    """The scan's report (module doc) for the candidate `folder` and the task file `task_spec`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: candidate folder not found")
    task = load_task(task_spec)
    ref = None
    if reference:
        try:
            ref = load_reference(reference)
        except InputError:
            ref = None  # the scan is evidence: a reference it cannot read only leaves its values out
    know = _Knowledge(task, ref)
    files = _files(folder)
    texts: dict[str, str] = {}
    findings: list[JsonObject] = []
    for path in files:
        rel = str(path.relative_to(folder))
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            findings.append(
                {
                    "kind": FindingKind.OPAQUE_FILE,
                    "file": rel,
                    "line": None,
                    "detail": f"a binary file of {path.stat().st_size} bytes (not readable by the scan)",
                }
            )
            continue
        texts[rel] = data.decode("utf-8", "replace")
    hashing = any(_HASH_CALL.search(t) for t in texts.values())
    for rel, text in texts.items():
        findings.extend(_capped(scan_text(rel, text, know, hashing)))
    summary: dict[str, int] = defaultdict(int)
    for f in findings:
        summary[f["kind"]] += f.get("count", 1)
    return {
        "schema_version": SCAN_SCHEMA_VERSION,
        "task": task.id,
        "candidate": str(folder),
        "files_scanned": len(files),
        "findings": findings,
        "summary": dict(sorted(summary.items())),
        "verdict": "evidence" if findings else "nothing found",
    }


def _capped(findings: list[JsonObject]) -> list[JsonObject]:
    out: list[JsonObject] = []
    per: dict[tuple[str, str], int] = defaultdict(int)
    dropped: dict[tuple[str, str], JsonObject] = {}
    for f in findings:
        key = (f["kind"], f["file"])
        per[key] += 1
        if per[key] <= MAX_PER_KIND:
            out.append(f)
        else:
            dropped[key] = f
    for key, f in dropped.items():
        out.append(
            {
                **f,
                "detail": f"{per[key] - MAX_PER_KIND} more finding(s) of this kind in the file",
                "count": per[key] - MAX_PER_KIND,
            }
        )
    return out
