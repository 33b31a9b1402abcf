"""The checks of the external tools the tracks and the tests call: Coq (coqc and coqchk of the
tasks' release, on this machine and inside the sandbox the proofs run in), the DRAT checker of
UNSAT answers, SLURM, and the headless browser of the explorer's tests. Each function returns one
`Check`; none raises, every subprocess has a timeout.

A missing coqc is reported as what it is (`coq_status`: not installed, not on the checker's PATH,
another release, no coqchk beside it), apart from a coqc that is installed but cannot run inside
the sandbox (`coq_sandbox_status`), which is only checked, and only blamed, once coqc is there."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from tcsexam.containment import Limiter, SandboxName
from tcsexam.doctor.types import (
    BROWSER,
    COQ_SANDBOX,
    COQC,
    DRAT_CHECKER,
    SLURM,
    Check,
    Health,
    broken,
    missing,
    ok,
    one_line,
    skipped,
)
from tcsexam.errors import InputError
from tcsexam.fileio import read_yaml
from tcsexam.limits import ProofLimits
from tcsexam.paths import config_dir
from tcsexam.problems.sat import parse_cnf_bytes
from tcsexam.records import Termination
from tcsexam.runner.limiter import Limits, RunPaths, RunSpec
from tcsexam.runner.limiter.launcher import harness_env
from tcsexam.runner.sandboxes import AUTO_ORDER, get_sandbox, unsandboxed_allowed
from tcsexam.runner.solver import drat
from tcsexam.suites import BINARY_TRACKS, normalize_track

#: the PATH every step of `tcsexam proof check` runs with (proofs/check.py): a coqc elsewhere is
#: not found by the checker even when it is on this shell's PATH
PROOF_PATH = "/usr/local/bin:/usr/bin:/bin"
#: how long a tool's `--version` may take
VERSION_TIMEOUT_S = 10
#: how long one sandboxed `coqc --print-version` or the DRAT checker's test proof may take
RUN_TIMEOUT_S = 30
PROOF_CONSEQUENCE = (
    "theorem and open-conjecture proofs cannot be judged (their rows judge_failed, the Index incomplete)"
)
DRAT_CONSEQUENCE = (
    "UNSAT answers of SAT tasks with unsat_proof: required cannot be verified (their records "
    "infrastructure_error, the task's score refused until rerun)"
)
#: what the bundled tasks were written for when no task is at hand (config/tasks/*: coq.version)
BUNDLED_COQ = "8.16"


# ---- Coq ----------------------------------------------------------------------------------------


def _suite_proof_items(path: Path) -> list[str]:
    try:
        tracks = (read_yaml(path, "suite file") or {}).get("tracks") or {}
    except InputError:
        return []
    if not isinstance(tracks, dict):
        return []
    return [str(i) for k, items in tracks.items() if normalize_track(str(k)) in BINARY_TRACKS for i in items or []]


def task_coq_versions(task_files: Iterable[str | os.PathLike] | None = None) -> dict[str, list[str]]:
    """Coq release -> the ids of the proof tasks written for it, of `task_files` (default: the
    proof tasks of the bundled suites, config/suites/*.yaml). A task without a version is left out;
    an unreadable file too (the run's own checks name it)."""
    if task_files is None:
        ids = {i for suite in sorted((config_dir() / "suites").glob("*.yaml")) for i in _suite_proof_items(suite)}
        task_files = [config_dir() / "tasks" / f"{i}.yaml" for i in sorted(ids)]
    found: dict[str, list[str]] = {}
    for path in task_files:
        try:
            data = read_yaml(path, "task file")
        except (InputError, OSError):
            continue
        if not isinstance(data, dict) or data.get("track") not in BINARY_TRACKS:
            continue
        version = str((data.get("coq") or {}).get("version", "") or "")
        if version:
            found.setdefault(version, []).append(str(data.get("id", Path(path).stem)))
    return found


def version_matches(required: str, have: str) -> bool:
    """Whether `have` (8.16.1) is the release `required` names (8.16, 8.16.1; "" any): the rule
    of `tcsexam proof check` (proofs/coq.py)."""
    return not required or have.split(".")[: len(required.split("."))] == required.split(".")


def _coq_fix(versions: list[str]) -> str:
    wanted = versions[0] if len(versions) == 1 else BUNDLED_COQ
    if wanted == BUNDLED_COQ or BUNDLED_COQ.startswith(wanted):
        return "make setup-coq (Debian/Ubuntu: sudo apt-get install coq; Debian 12's is 8.16.1; elsewhere: opam install coq.8.16.1)"
    return f"install Coq {wanted} (its coqc and coqchk) in /usr/bin or /usr/local/bin, e.g. opam install coq.{wanted}"


def _version_of(exe: str, flag: str = "--print-version", word: int = 0) -> tuple[str | None, str]:
    """(the `word`th word its `flag` prints (its version), '') or (None, why it did not answer)."""
    try:
        done = subprocess.run(
            [exe, flag],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            env=harness_env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, f"`{exe} {flag}` did not answer within {VERSION_TIMEOUT_S} s"
    except OSError as exc:
        return None, f"cannot run {exe}: {exc.strerror or exc}"
    words = done.stdout.split()
    if done.returncode != 0 or len(words) <= word:
        return None, f"`{exe} {flag}` failed: {one_line(done.stderr or f'exit code {done.returncode}', 200)}"
    return words[word], ""


def coq_status(versions: Iterable[str] | None = None, coqc: str = "coqc") -> Check:
    """The coqc the proof checker runs on this machine (the first on `PROOF_PATH`, the PATH of
    its steps): installed, answering, of a release the tasks accept (`versions`; default: those
    of the bundled suites' proof tasks), with coqchk on that PATH too. Only a coqc that is not
    there at all (neither on this PATH nor on the checker's) is `missing` ("not installed"); one
    that is there but unusable is `broken` with the reason."""
    wanted = sorted(set(versions) if versions is not None else set(task_coq_versions()))
    need = f"the tasks need Coq {' or '.join(wanted)}" if wanted else "the tasks name no Coq release"
    fix = _coq_fix(wanted)
    mine, exe = shutil.which(coqc), shutil.which(coqc, path=PROOF_PATH)
    if exe is None and mine is None:
        return missing(COQC, f"not installed (no {coqc} on PATH; {need})", PROOF_CONSEQUENCE, fix)
    if exe is None:
        return broken(
            COQC,
            f"{mine} is not on the proof checker's PATH ({PROOF_PATH}; {need})",
            PROOF_CONSEQUENCE,
            f"install Coq system-wide ({fix}), or link coqc and coqchk into /usr/local/bin",
        )
    have, why = _version_of(exe)
    if have is None:
        return broken(COQC, f"{exe} installed but does not run: {why}", PROOF_CONSEQUENCE, fix)
    if wanted and not any(version_matches(v, have) for v in wanted):
        return broken(
            COQC,
            f"{have} ({exe}), but {need}",
            f"`tcsexam proof check` refuses those tasks (exit 1): {PROOF_CONSEQUENCE}",
            fix,
        )
    coqchk = shutil.which("coqchk", path=PROOF_PATH)
    if coqchk is None:
        return broken(
            COQC,
            f"{have} ({exe}), but no coqchk on the proof checker's PATH (the kernel re-check of every proof)",
            PROOF_CONSEQUENCE,
            "install coqchk beside coqc (Debian: it is in the coq package)",
        )
    other = mine is not None and os.path.realpath(mine) != os.path.realpath(exe)
    also = f"; not {mine}, first on this PATH: the checker runs {exe}" if other else ""
    return ok(COQC, f"{have} ({exe}, coqchk {coqchk}; {need}{also})")


def _probe_coqc(box, limiter: Limiter) -> tuple[str | None, str]:
    """(coqc's version inside `box`, '') or (None, why it does not run there): `coqc
    --print-version` run as a proof's checker step runs (the checker's PATH, a scratch folder)."""
    work = tempfile.mkdtemp(prefix="tcsexam-doctor-coq-", dir="/tmp")
    try:
        os.chmod(work, 0o755)
        out = Path(work) / "version.out"
        env = {"PATH": PROOF_PATH, "HOME": work, "TMPDIR": work, "LANG": "C.UTF-8"}
        paths = RunPaths(writable_paths=[work], stdout_path=out)
        spec = RunSpec(["coqc", "--print-version"], work, Limits(wall_s=RUN_TIMEOUT_S), env, paths, limiter)
        outcome = box.run(spec)
        printed = out.read_text(errors="replace").split() if out.exists() else []
    except Exception as exc:  # a LaunchError (no coqc inside), a sandbox that cannot start
        return None, one_line(exc, 200)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if outcome.sandbox_error is None and outcome.termination == Termination.EXIT and outcome.exit_code == 0 and printed:
        return printed[0], ""
    said = outcome.sandbox_error or outcome.stderr_tail or outcome.message or f"exit code {outcome.exit_code}"
    return None, one_line(said, 200)


def coq_sandbox_status(
    sandbox: SandboxName = SandboxName.AUTO,
    *,
    allow_unsandboxed: bool = False,
    limiter: Limiter = Limiter.AUTO,
    versions: Iterable[str] | None = None,
    host: Check | None = None,
) -> Check:
    """coqc inside the sandbox the proofs would run in (`auto`: the first of bwrap, docker,
    apptainer, and local where allowed, that starts and runs coqc, as `tcsexam proof check`
    chooses). When none runs it and the machine's coqc is not installed or does not work (`host`,
    default `coq_status()`), the cause is that, not the sandbox: `skipped`, pointing at the coqc
    line."""
    wanted = sorted(set(versions) if versions is not None else set(task_coq_versions()))
    host = host or coq_status(wanted)
    names = (
        [sandbox]
        if sandbox != SandboxName.AUTO
        else [n for n in AUTO_ORDER if n != "local" or unsandboxed_allowed(allow_unsandboxed)]
    )
    tried = []
    for name in names:
        try:
            box = get_sandbox(name)
            box.check_available()
        except InputError as exc:
            tried.append(f"{name}: {one_line(str(exc).removeprefix(f'sandbox {name}: '), 160)}")
            continue
        have, why = _probe_coqc(box, limiter)
        if have is None:
            tried.append(f"{name}: coqc does not run inside: {why}")
            continue
        if wanted and not any(version_matches(v, have) for v in wanted):
            tried.append(f"{name}: coqc {have} inside, the tasks need {' or '.join(wanted)}")
            continue
        return ok(COQ_SANDBOX, f"{have} inside sandbox {name}")
    if host.health == Health.MISSING:
        return skipped(COQ_SANDBOX, f"coqc is not installed (the {COQC} line)")
    if host.failed:  # the sandboxes see the machine's coqc: its own problem comes first
        return skipped(COQ_SANDBOX, f"the machine's coqc does not work (the {COQC} line); " + "; ".join(tried))
    return broken(
        COQ_SANDBOX,
        "no sandbox runs coqc: " + "; ".join(tried),
        PROOF_CONSEQUENCE,
        "make a sandbox work (its line) and coqc visible inside it (bwrap and apptainer see /usr; the Docker "
        "image: make candidate-image installs Coq), or, only if the proofs are trusted, --allow-unsandboxed",
    )


# ---- the DRAT checker ---------------------------------------------------------------------------

#: an unsatisfiable formula no unit propagation alone refutes, and its DRAT proof (x1, then empty)
TEST_FORMULA = "p cnf 2 4\n1 2 0\n1 -2 0\n-1 2 0\n-1 -2 0\n"
TEST_PROOF = "1 0\n0\n"


def drat_status(limiter: Limiter = Limiter.AUTO, engine: str = "auto") -> Check:
    """The DRAT checker verifying a two-step proof of a small UNSAT formula exactly as a run checks
    a candidate's proof (`runner.solver.drat.check_proof`: the checker program from a copy, this Python,
    under its limits with `limiter`; as the candidates' uid when the harness is root)."""
    fix = "pip install 'dratify>=0.1.10,<0.2' 'cdclkit-native>=0.1.7,<0.2' (tcsexam dependencies: make setup)"
    instance = parse_cnf_bytes(TEST_FORMULA.encode(), "<doctor's test formula>")
    with tempfile.TemporaryDirectory(prefix="tcsexam-doctor-drat-") as folder:
        proof = Path(folder) / drat.PROOF_NAME
        proof.write_text(TEST_PROOF)
        try:
            verdict = drat.check_proof(
                instance,
                proof,
                limits=ProofLimits(wall_s=RUN_TIMEOUT_S, mem_mb=1024, proof_mb=1),
                scratch=Path(folder),
                limiter=limiter,
                engine=engine,
            )
        except drat.CheckerMissing as exc:
            said = str(exc)
            if "cannot be imported" in said:
                return missing(DRAT_CHECKER, one_line(said, 200), DRAT_CONSEQUENCE, fix)
            return broken(DRAT_CHECKER, one_line(said, 200), DRAT_CONSEQUENCE, fix)
        except Exception as exc:  # a limiter or sandbox that cannot start here
            return broken(DRAT_CHECKER, f"the checker could not run: {one_line(exc, 200)}", DRAT_CONSEQUENCE, fix)
    if not verdict.verified:
        return broken(
            DRAT_CHECKER,
            f"a valid two-step proof was not verified: {one_line(verdict.reason, 200)}",
            DRAT_CONSEQUENCE,
            fix,
        )
    checker = verdict.checker or "(checker unnamed)"
    if "engine native" not in checker:
        checker += " (no cdclkit-native: proofs checked about 15x slower; pip install cdclkit-native)"
    return ok(DRAT_CHECKER, checker)


# ---- SLURM and the browser ----------------------------------------------------------------------

SLURM_TOOLS = ("sbatch", "squeue", "sinfo")


def slurm_status() -> Check:
    """SLURM's client commands on PATH and a controller that answers `sinfo`."""
    consequence = "the slurm profiles (workflow/profiles/slurm) cannot submit jobs; local runs are unaffected"
    found = {tool: shutil.which(tool) for tool in SLURM_TOOLS}
    absent = [tool for tool, path in found.items() if path is None]
    if len(absent) == len(SLURM_TOOLS):
        return missing(
            SLURM,
            f"not installed (no {', '.join(SLURM_TOOLS)} on PATH)",
            consequence,
            "install SLURM's client (apt-get install slurm-client) configured for your cluster (docs/workflow.md)",
        )
    if absent:
        return broken(SLURM, f"{', '.join(absent)} not on PATH", consequence, "install SLURM's client completely")
    version, _ = _version_of(str(found["sinfo"]), "--version", 1)  # "slurm 22.05.8"
    try:
        done = subprocess.run(
            [str(found["sinfo"]), "-h", "-o", "%P %a %D %T"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return broken(SLURM, f"sinfo did not answer ({one_line(exc, 160)})", consequence, "check slurmctld and munge")
    if done.returncode != 0:
        said = one_line(done.stderr or f"exit code {done.returncode}", 200)
        return broken(
            SLURM,
            f"no controller answers sinfo: {said}",
            consequence,
            "start slurmctld (and munged), or check SLURM_CONF",
        )
    partitions = sorted({line.split()[0] for line in done.stdout.splitlines() if line.split()})
    return ok(
        SLURM, f"{version or '(version unknown)'}, controller answers (partitions: {', '.join(partitions) or 'none'})"
    )


def browser_status() -> Check:
    """Debian's chromium, its chromedriver and selenium: what the explorer's browser tests drive
    (tests/unit/view/browserkit.py, with the same TCSEXAM_CHROMIUM / TCSEXAM_CHROMEDRIVER)."""
    consequence = (
        "the explorer's browser tests (tests/unit/view/test_browser.py) skip (fail with TCSEXAM_REQUIRE_BROWSER=1); "
        "`tcsexam view` itself needs no browser"
    )
    chromium = os.environ.get("TCSEXAM_CHROMIUM", "/usr/bin/chromium")
    driver: str | None = os.environ.get("TCSEXAM_CHROMEDRIVER", "/usr/bin/chromedriver")
    driver = driver if driver and Path(driver).is_file() else shutil.which("chromedriver")
    absent = [name for name, there in (("chromium", Path(chromium).is_file()), ("chromedriver", driver)) if not there]
    if importlib.util.find_spec("selenium") is None:
        absent.append("selenium")
    if absent:
        fixes = ["apt-get install chromium chromium-driver"] if set(absent) - {"selenium"} else []
        fixes += ["pip install -e '.[test]'"] if "selenium" in absent else []
        fix = " and ".join(fixes)
        return missing(BROWSER, f"not installed: {', '.join(absent)} (chromium at {chromium})", consequence, fix)
    version, _ = _version_of(chromium, "--version", 1)  # "Chromium 120.0.6099.224 built on Debian ..."
    return ok(BROWSER, f"chromium {version or '(version unknown)'} ({chromium}), chromedriver ({driver})")
