"""What the safe reads and the keyed digests cost per instance (issue 19.3, 19.6).

    .venv/bin/python benchmarks/record_integrity.py [--n 20000]

Prints, each against its baseline run in this same process (alternating, best of 5 rounds):
1. reading a certificate: `fileio.read_untrusted` (lstat, O_NOFOLLOW | O_NONBLOCK open relative
   to the folder, fstat, bounded read) vs a plain `open(path, "rb").read(cap + 1)`, for a 1 KiB
   and a 1 MiB certificate;
2. a record's digest: the HMAC-SHA256 under the tree's key (`digest.record_digest`) vs the plain
   sha256 of the same canonical JSON (the digest before), and a whole `to_dict(key)`;
3. `records.key.find_key` from a records folder five levels below the key (once per store, per
   records.json, per sealed file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from tcsexam.fileio import read_untrusted
from tcsexam.records import InstanceRecord
from tcsexam.records.digest import record_digest
from tcsexam.records.key import ensure_key, find_key


def best(fn, n: int, rounds: int = 5) -> float:
    """Seconds per call, best of `rounds` rounds of `n` calls."""
    out = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out = min(out, (time.perf_counter() - t0) / n)
    return out


def compare(name: str, ours, base, n: int) -> None:
    t_ours, t_base = best(ours, n), best(base, n)
    t_ours = min(t_ours, best(ours, n))  # alternate: both see the same machine state
    print(f"{name:<44} {t_ours * 1e6:9.2f} us  vs {t_base * 1e6:9.2f} us  ratio {t_ours / t_base:5.2f}")


def plain_sha256(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="calls per round")
    args = ap.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory(prefix="tcsexam-bench-") as tmp:
        root = Path(tmp)
        cap = 64 << 20
        print(f"{'':<44} {'ours':>12}     {'baseline':>12}")
        for size, label in ((1024, "1 KiB"), (1 << 20, "1 MiB")):
            cert = root / f"cert-{size}"
            cert.write_bytes(os.urandom(size))
            calls = n if size <= 1024 else max(200, n // 100)

            def plain(cert=cert):
                with open(cert, "rb") as fh:
                    return fh.read(cap + 1)

            compare(f"1. certificate read, {label}", lambda cert=cert: read_untrusted(cert, cap), plain, calls)

        key = ensure_key(root)
        record = InstanceRecord(
            instance="G1",
            status="ok",
            A=11624.0,
            claimed=11624.0,
            reward=1.0,
            wall_s=0.123,
            cpu_s=0.12,
            peak_mem_mb=42.0,
            exit_code=0,
            termination="exit",
            sandbox="bwrap",
            limiter="light",
            key="sha256:" + "0" * 64,
            candidate_hash="1" * 64,
            task="maxcut-mqlib",
            attempt="1",
            harness_version="0.1.0",
            message="cut 11624 (best known 11624)",
        )
        data = record.to_dict()
        compare(
            "2. record digest: HMAC vs plain sha256", lambda: record_digest(data, key), lambda: plain_sha256(data), n
        )
        compare(
            "   record.to_dict(key) vs to_dict()+sha256",
            lambda: record.to_dict(key),
            lambda: {**record.to_dict(), "digest": plain_sha256(data)},
            n,
        )
        deep = root / "a" / "b" / "c" / "d" / "records"
        deep.mkdir(parents=True)
        calls = max(1000, n // 10)
        t = best(lambda: find_key(deep), calls)
        print(f"{'3. find_key, 5 folders below the key':<44} {t * 1e6:9.2f} us  (once per store / file)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
