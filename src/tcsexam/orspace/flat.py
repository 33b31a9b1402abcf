"""The flat-prompt interface: one deterministic text that serialises every visible artifact of a
staged workspace with its relative path (format `orspace-flat-v1`).

```
# OR-Space workspace or_space_001_build
# format: orspace-flat-v1
# condition: revise-all_flat_both
# files: 3
# empty folders: src/

<<<FILE docs/business_requirement.md bytes=1234 sha256=<hex> encoding=utf-8>>>
...the file's text, exactly 1234 bytes of UTF-8...
<<<END docs/business_requirement.md>>>

<<<FILE data/blob.bin bytes=10 sha256=<hex> encoding=base64>>>
...base64 of the bytes...
<<<END data/blob.bin>>>
```

- Files in sorted order of their POSIX relative path; the staged folder's files only (the
  evaluator-only files are already gone), so a prompt never holds more than the folder.
- `bytes` is the byte length of the body as written (the UTF-8 text, or the base64 text of a file
  that is not UTF-8), so a body may contain any marker line and still parses; the body is followed
  by one newline and the END line.
- `empty folders` names the (recreated) submission folders, where the agent's program goes.
- Nothing depends on time, the machine or the order of the file system: the same folder always
  gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

FORMAT = "orspace-flat-v1"
_HEADER = re.compile(rb"<<<FILE (\S+) bytes=(\d+) sha256=([0-9a-f]{64}) encoding=(utf-8|base64)>>>\n")


def visible_files(folder: Path) -> list[Path]:
    return sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix())


def empty_folders(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix() + "/" for p in folder.rglob("*") if p.is_dir() and not any(p.iterdir())
    )


def render(folder: Path, workspace_id: str, condition_slug: str) -> bytes:
    """The flat prompt of a staged workspace folder."""
    files = visible_files(folder)
    head = [
        f"# OR-Space workspace {workspace_id}",
        f"# format: {FORMAT}",
        f"# condition: {condition_slug}",
        f"# files: {len(files)}",
        f"# empty folders: {' '.join(empty_folders(folder)) or '-'}",
        "",
    ]
    parts = ["\n".join(head).encode("utf-8") + b"\n"]
    for path in files:
        rel = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        try:
            data.decode("utf-8")
            body, encoding = data, "utf-8"
        except UnicodeDecodeError:
            body, encoding = base64.b64encode(data), "base64"
        sha = hashlib.sha256(data).hexdigest()
        parts.append(f"<<<FILE {rel} bytes={len(body)} sha256={sha} encoding={encoding}>>>\n".encode())
        parts.append(body + b"\n" + f"<<<END {rel}>>>\n\n".encode())
    return b"".join(parts)


def parse(prompt: bytes) -> dict[str, bytes]:
    """relative path -> file bytes of a flat prompt (ValueError when it is not well formed)."""
    out: dict[str, bytes] = {}
    pos = prompt.find(b"<<<FILE ")
    while pos != -1:
        match = _HEADER.match(prompt, pos)
        if not match:
            raise ValueError(f"malformed file header at byte {pos}")
        rel, size = match.group(1).decode(), int(match.group(2))
        start = match.end()
        body = prompt[start : start + size]
        end_line = f"\n<<<END {rel}>>>\n".encode()
        if prompt[start + size : start + size + len(end_line)] != end_line:
            raise ValueError(f"{rel}: body is not followed by its END line")
        data = base64.b64decode(body) if match.group(4) == b"base64" else body
        if hashlib.sha256(data).hexdigest() != match.group(3).decode():
            raise ValueError(f"{rel}: sha256 does not match")
        out[rel] = data
        pos = prompt.find(b"<<<FILE ", start + size + len(end_line))
    return out
