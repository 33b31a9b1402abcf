"""The DRAT checker program the harness runs on a candidate's UNSAT proof (`tcsexam.runner.solver.drat`).

usage: python3 drat_check.py FORMULA.cnf PROOF [--engine auto|native|python]

A program of its own, run by the harness under its own limits (never in the harness's process):
it imports only numpy and dratify (and cdclkit-native, dratify's Rust engine, when installed), so
that it runs from a copy in a folder the checker's uid can read. FORMULA is the canonical DIMACS
the harness wrote from the instance it parsed; PROOF the harness's copy of the candidate's proof,
text DRAT (dratify's own parser) or binary DRAT (a NUL byte anywhere: decoded here, vectorised,
into dratify's steps). It prints its verdict last, one line each:

    c checker dratify 0.1.10 engine native (cdclkit-native 0.1.7)
    c proof text, 75915 steps, 2894477 bytes
    c reason empty clause derived and every step verified
    s VERIFIED            (or: s NOT VERIFIED)

and exits 0 with a verdict; exit 3 with `c checker missing: ...` when dratify cannot be imported
(the harness's fault, not the proof's).
"""

from __future__ import annotations

import sys

MISSING_EXIT = 3


def _say(*lines: str) -> None:
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()


def _one_line(text: object, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode_binary(data: bytes):
    """Binary DRAT (`a`/`d`, then literals as 7-bit groups, low first, 2*var+negated, ending 0)
    as dratify steps [(kind, internal literals)], internal = 2*(var-1)+negated = code - 2;
    ValueError saying where it is malformed."""
    import numpy as np

    b = np.frombuffer(data, dtype=np.uint8)
    if b.size == 0:
        return []
    if b[-1] >= 128:
        raise ValueError("binary proof ends inside a literal (truncated)")
    ends = np.flatnonzero(b < 128)
    starts = np.concatenate(([0], ends[:-1] + 1))
    width = ends - starts + 1
    if (width > 9).any():
        at = int(starts[np.argmax(width > 9)])
        raise ValueError(f"binary proof byte {at}: a literal longer than 9 bytes")
    number = np.repeat(np.arange(ends.size), width)
    shift = (np.arange(b.size) - starts[number]) * 7
    vals = np.add.reduceat((b & 127).astype(np.uint64) << shift.astype(np.uint64), starts).astype(np.int64)
    zeros = np.flatnonzero(vals == 0)
    if zeros.size == 0 or zeros[-1] != vals.size - 1:
        raise ValueError("binary proof: the last step is not terminated by 0 (truncated)")
    kind_at = np.concatenate(([0], zeros[:-1] + 1))
    kinds = vals[kind_at]
    bad = (kinds != 97) & (kinds != 100)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"binary proof step {i + 1} (byte {int(starts[kind_at[i]])}): starts with {int(kinds[i])}, not 'a' or 'd'"
        )
    lit_mask = np.ones(vals.size, dtype=bool)
    lit_mask[kind_at] = False
    lit_mask[zeros] = False
    lits = vals[lit_mask]
    if (lits < 2).any():
        raise ValueError("binary proof: a literal code below 2 (names variable 0)")
    lengths = zeros - kind_at - 1
    internal = (lits - 2).tolist()
    out, pos = [], 0
    for kind, n in zip((kinds == 100).tolist(), lengths.tolist(), strict=True):
        out.append(("d" if kind else "a", tuple(internal[pos : pos + n])))
        pos += n
    return out


def main(argv: list[str]) -> int:
    args = argv[1:]
    engine = "auto"
    if "--engine" in args:
        i = args.index("--engine")
        engine = args[i + 1]
        del args[i : i + 2]
    formula_path, proof_path = args
    try:
        import dratify
    except ImportError as exc:  # the harness's installation, not the proof (a MemoryError is the limit's)
        _say(f"c checker missing: dratify cannot be imported ({_one_line(exc)})", "s NOT VERIFIED")
        return MISSING_EXIT
    native = ""
    if engine != "python":
        try:
            import cdclkit_native

            dratify.register_native(cdclkit_native)
            from importlib.metadata import version

            native = f" (cdclkit-native {version('cdclkit-native')})"
        except ImportError:
            if engine == "native":
                _say(
                    "c checker missing: engine native asked for but cdclkit-native cannot be imported", "s NOT VERIFIED"
                )
                return MISSING_EXIT
    used = "native" if native else "python"
    _say(f"c checker dratify {dratify.__version__} engine {used}{native}")
    with open(formula_path) as fh:
        formula = dratify.parse_dimacs(fh.read())
    with open(proof_path, "rb") as fh:
        data = fh.read()
    binary = b"\0" in data
    try:
        if binary:
            steps = decode_binary(data)
        else:
            try:
                text = data.decode("ascii")
            except UnicodeDecodeError as exc:
                raise ValueError(f"text proof byte {exc.start}: not ASCII") from None
            steps = dratify.parse_proof(text)
        del data
        result = dratify.check_proof(formula, steps, engine=used)
    except ValueError as exc:
        _say(
            f"c proof {'binary' if binary else 'text'}, unreadable",
            f"c reason malformed proof: {_one_line(exc)}",
            "s NOT VERIFIED",
        )
        return 0
    _say(f"c proof {'binary' if binary else 'text'}, {len(steps)} steps")
    reason = result.reason
    if not result.ok and result.failed_step > 0:
        reason = f"{reason} (first failing step {result.failed_step})"
    _say(f"c reason {_one_line(reason)}", "s VERIFIED" if result.ok and result.reached_empty else "s NOT VERIFIED")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
