"""The text scan of a proof script: comments and strings stripped (nested `(* *)`, strings inside
comments, `""` inside strings, as Coq's lexer reads them), then every forbidden command or flag.

It is the first line only: what decides is semantic (`tcsexam.proofs.check`: Print Assumptions,
Print Libraries, coqchk). It exists so that a proof that would write, read or load outside its
folder never runs, and so that the reason a proof is refused names the command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: (pattern on the stripped text, why it is refused)
FORBIDDEN: tuple[tuple[str, str], ...] = (
    (r"\bDeclare\s+ML\s+Module\b", "loads a plugin (Declare ML Module)"),
    (r"\bAdd\s+(?:Rec\s+)?ML\s+Path\b", "changes the plugin path (Add ML Path)"),
    (r"\bAdd\s+(?:Rec\s+)?LoadPath\b", "changes the load path (Add LoadPath)"),
    (r"\bLoad\b", "reads another file (Load)"),
    (r"\bCd\b", "changes the working directory (Cd)"),
    (r"\bDrop\b", "leaves the proof checker's toplevel (Drop)"),
    (r"\bRedirect\b", "writes a file (Redirect)"),
    (r"\bExtraction\b", "writes files (Extraction)"),
    (r"\bLocate\s+(?:File|Library)\b", "inspects files outside the proof (Locate File/Library)"),
    (r"\b(?:Set|Unset)\s+(?:Guard|Positivity|Universe)\s+Checking\b", "changes the kernel's checks"),
    (r"\b(?:Set|Unset)\s+Guard\b", "changes the kernel's guard check"),
    (r"\bbypass_check\b", "bypasses a kernel check (#[bypass_check])"),
    (r"\b(?:Set|Unset)\s+Definitional\s+UIP\b", "extends the kernel's theory (Definitional UIP)"),
    (r"\bType\s+In\s+Type\b", "collapses the universe hierarchy"),
    (r"\bPrimitive\b", "declares a kernel primitive"),
    (r"\bRegister\b", "registers a kernel or tactic primitive"),
    (r"\bnative_compute\b|\bnative_cast_no_check\b", "relies on native compilation (native_compute)"),
)
_COMPILED = tuple((re.compile(p), why) for p, why in FORBIDDEN)


@dataclass(frozen=True)
class Finding:
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.text!r} {self.why}"


def strip_comments(source: str) -> str:
    """`source` with every comment and string literal replaced by spaces (newlines kept, so that
    line numbers still hold). An unterminated comment or string runs to the end (Coq refuses it)."""
    out = []
    i, n = 0, len(source)
    depth = 0  # comment nesting
    in_string = False  # inside "..." (in code or inside a comment)
    while i < n:
        c = source[i]
        two = source[i : i + 2]
        if in_string:
            if c == '"':
                if source[i + 1 : i + 2] == '"':  # "" is a quote inside the string
                    out.append("  ")
                    i += 2
                    continue
                in_string = False
            out.append("\n" if c == "\n" else " ")
            i += 1
        elif depth > 0:
            if two == "(*":
                depth += 1
                out.append("  ")
                i += 2
            elif two == "*)":
                depth -= 1
                out.append("  ")
                i += 2
            else:
                if c == '"':
                    in_string = True
                out.append("\n" if c == "\n" else " ")
                i += 1
        elif two == "(*":
            depth = 1
            out.append("  ")
            i += 2
        elif c == '"':
            in_string = True
            out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(source: str) -> list[Finding]:
    """Every forbidden command in `source` outside comments and strings, in text order."""
    code = strip_comments(source)
    found = []
    for pattern, why in _COMPILED:
        for m in pattern.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            found.append(Finding(line, " ".join(m.group(0).split()), why))
    return sorted(found, key=lambda f: f.line)
