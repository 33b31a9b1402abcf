"""Every versioned output format of the harness: what it is, the files it describes, its current
version and its history.

A format's version lives where the format is written (the constants named in `constants`, e.g.
`tcsexam.records.SCHEMA_VERSION`), so that no module imports this one; tests/unit/test_formats.py
checks that each constant spells this list's current version, and that every version constant of
`src/tcsexam` is listed here. To change a format in a way an earlier reader would misread (a field
dropped, renamed or given another meaning): raise its constant, add a `Change` here saying what
changed, and make its reader read the earlier version too (as `tcsexam.orspace.record` reads its
version 1). A change that earlier readers read correctly (a new optional field, a new key in a
record's `extra`) keeps the version and is noted in `kept`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    """One version of a format (or, in `Format.kept`, a change that kept its version)."""

    version: int
    date: str  #: YYYY-MM-DD of the commit
    commit: str  #: the commit that made it (abbreviated hash)
    what: str


@dataclass(frozen=True)
class Format:
    name: str
    files: str  #: the files (or the part of a file) it describes
    constants: tuple[str, ...]  #: "module:NAME" of every constant holding its current version
    history: tuple[Change, ...]  #: every version, oldest first
    spelling: str = "{}"  #: how the constants spell a version ("orspace-flat-v{}": a tag)
    kept: tuple[Change, ...] = ()  #: changes that earlier readers read correctly (same version)

    @property
    def version(self) -> int:
        """The current version: the last of its history."""
        return self.history[-1].version

    def spelt(self, version: int | None = None) -> int | str:
        """A version (default: the current one) as its constants hold it."""
        version = self.version if version is None else version
        return version if self.spelling == "{}" else self.spelling.format(version)


def _first(date: str, commit: str, what: str = "first version") -> tuple[Change, ...]:
    return (Change(1, date, commit, what),)


FORMATS: tuple[Format, ...] = (
    Format(
        "instance-record",
        "a Solver attempt's records/<instance>.json and the records.json list of them",
        ("tcsexam.records:SCHEMA_VERSION",),
        _first("2026-11-30", "97fabb0"),
        kept=(
            Change(1, "2026-11-30", "14bbaa9", "candidate_hash (provenance)"),
            Change(1, "2026-11-30", "ab2d73c", "sandbox_image, written only when set"),
            Change(1, "2026-12-01", "4f6c02d", "trace, written only for anytime tasks; extra.trace_info"),
            Change(1, "2026-12-03", "ea26ec6", "extra.sandbox_info"),
            Change(1, "2026-12-06", "889836a", "extra.limits"),
            Change(1, "2026-12-06", "e195278", "extra.instance_given"),
            Change(1, "2026-12-06", "b2e2346", "extra.kept: the certificate and proof kept beside records.json"),
        ),
    ),
    Format(
        "workspace-record",
        "an OR-Space run's OUT/records/<workspace_id>.json",
        ("tcsexam.orspace.record:SCHEMA_VERSION",),
        (
            Change(1, "2026-12-01", "9064a77", "first version: the dict records as a dataclass, plus digest and tries"),
            Change(
                2,
                "2026-12-06",
                "82e72ec",
                "time_limit_s dropped (it repeated limits.wall_s; b7988e4 dropped it on 2026-12-04 but kept "
                "version 1); version 1 records, with or without it, still read",
            ),
        ),
        kept=(
            Change(
                2, "2026-12-06", "18be2e7", "files_read and model_lp (attribution evidence), written only when captured"
            ),
        ),
    ),
    Format(
        "orspace-objectives",
        "objectives.json of tcsexam orspace score-objectives",
        ("tcsexam.orspace.objectives:SCHEMA_VERSION",),
        _first("2026-11-30", "041a96d"),
        kept=(
            Change(1, "2026-12-06", "3f66896", "pass_rates (three views), rows' disputed/passed_any_evidenced, inputs"),
            Change(
                1, "2026-12-06", "18be2e7", "rows' attribution and attribution_evidence, attributions (--attribute)"
            ),
            Change(
                1,
                "2026-12-06",
                "0d2ca9d",
                "rows' attributed_by and attribution_judge, attributed_by and attribution_judge (--attribution-judge)",
            ),
        ),
    ),
    Format(
        "orspace-explain",
        "explain.json of tcsexam orspace explain-score",
        ("tcsexam.orspace.explain:SCHEMA_VERSION",),
        _first("2026-11-30", "041a96d"),
        kept=(
            Change(1, "2026-12-06", "5805fcc", "judge_repeat"),
            Change(
                1,
                "2026-12-06",
                "dfc1d16",
                "rows' second_judge, second_judge_*, judge_agreement, judge_disagreements (--second-judge-model)",
            ),
        ),
    ),
    Format(
        "orspace-effects",
        "the JSON of tcsexam orspace effects (--output)",
        ("tcsexam.orspace.effects:SCHEMA_VERSION",),
        _first("2026-12-01", "dd67c1b"),
        kept=(
            Change(1, "2026-12-06", "3f66896", "per mode disputed_left_out and any_evidenced"),
            Change(1, "2026-12-06", "18be2e7", "per condition attributions"),
        ),
    ),
    Format(
        "orspace-reference-audit",
        "the JSON of tcsexam orspace audit-references (a run's reference-audit.json)",
        ("tcsexam.orspace.audit:SCHEMA_VERSION",),
        _first("2026-12-06", "3f66896"),
    ),
    Format(
        "orspace-leaderboard",
        "the JSON of tcsexam orspace leaderboard (the workflow's <orspace>/leaderboard.json)",
        ("tcsexam.orspace.leaderboard:SCHEMA_VERSION",),
        _first("2026-12-06", "94dc2d0"),
    ),
    Format(
        "orspace-judge-agreement",
        "the JSON of tcsexam orspace judge-agreement",
        ("tcsexam.orspace.judge_agreement:SCHEMA_VERSION",),
        _first("2026-12-06", "5805fcc"),
    ),
    Format(
        "orspace-stage-manifest",
        "STAGE/manifest.json of tcsexam orspace stage",
        ("tcsexam.orspace.stage:MANIFEST_VERSION",),
        (
            Change(1, "2026-11-30", "041a96d", "first version"),
            Change(2, "2026-12-01", "4cc0e68", "condition, leakage_audit; per workspace audit and prompt"),
        ),
    ),
    Format(
        "orspace-flat-prompt",
        "STAGE/prompts/<workspace_id>.txt, a staged workspace as one text (its '# format:' line)",
        ("tcsexam.orspace.flat:FORMAT",),
        _first("2026-12-01", "4cc0e68"),
        spelling="orspace-flat-v{}",
    ),
    Format(
        "orspace-judge-prompt",
        "the Explain judge's prompt, named with its sha256 in every judgment the judge caches",
        ("tcsexam.orspace.judge_prompt:PROMPT_VERSION",),
        _first("2026-11-30", "041a96d"),
        spelling="orspace-judge-v{}",
    ),
    Format(
        "orspace-attribution-prompt",
        "the attribution judge's prompt, named with its sha256 on every row it judged and in its cached replies",
        ("tcsexam.orspace.attribution_judge:PROMPT_VERSION",),
        _first("2026-12-06", "0d2ca9d"),
        spelling="orspace-attribution-v{}",
    ),
    Format(
        "agent-generation",
        "generation.json of an agent's OR-Space workspace (tcsexam agents generate) or track attempt (agents solve)",
        ("tcsexam.agents.accounting:SCHEMA_VERSION",),
        _first("2026-12-06", "988a66f"),
        kept=(Change(1, "2026-12-06", "d82abba", "run_dir: the run's folder, which log_file is relative to"),),
    ),
    Format(
        "agent-reply",
        "the reply grammar of the agents' flat interface, named in its prompt and in generation.json",
        ("tcsexam.agents.flat:REPLY_FORMAT",),
        _first("2026-12-06", "988a66f"),
        spelling="orspace-reply-v{}",
    ),
    Format(
        "anytime-key",
        "what the record key of an anytime task holds about its trace (a new version reruns them)",
        ("tcsexam.runner.solver.anytime:KEY_VERSION",),
        _first("2026-12-01", "4f6c02d"),
    ),
    Format(
        "given-instance-key",
        "the record key of an instance given to candidates as a normalised copy",
        ("tcsexam.runner.solver.orchestrate:GIVEN_KEY_VERSION",),
        _first("2026-12-06", "e195278"),
    ),
    Format(
        "calibration",
        "calibration.json beside a Solver job's records.json, and its run-wide summary",
        ("tcsexam.runner.observers.calibrate:VERSION",),
        _first("2026-12-01", "d7e553f"),
    ),
    Format(
        "heartbeat",
        "heartbeat.json of a running Solver job (read by tcsexam status)",
        ("tcsexam.runner.observers.heartbeat:HEARTBEAT_FORMAT",),
        _first("2026-12-01", "04ea87b"),
    ),
    Format(
        "status-plan",
        "<tree>/.status/plan.json, the workflow's planned Solver attempts (read by tcsexam status)",
        ("tcsexam.status:PLAN_FORMAT",),
        _first("2026-12-01", "13a3a0b"),
    ),
    Format(
        "proof-verdict",
        "verdict.json of tcsexam proof check",
        ("tcsexam.proofs.check:SCHEMA_VERSION",),
        _first("2026-12-03", "5746fbb"),
    ),
    Format(
        "comparison",
        "compare.json of tcsexam compare",
        ("tcsexam.reproduce.compare:SCHEMA_VERSION",),
        _first("2026-11-30", "14bbaa9"),
    ),
    Format(
        "manifest",
        "RUN/manifest.json, a run's provenance (tcsexam manifest)",
        ("tcsexam.reproduce.manifest:SCHEMA_VERSION",),
        _first("2026-11-30", "14bbaa9"),
    ),
    Format(
        "attempt-row",
        "a sealed attempt row (ROW.json of the tcsexam attempts row commands), gathered in attempts.csv",
        ("tcsexam.attempts.rows:ROW_SCHEMA_VERSION",),
        _first("2026-11-30", "312f65b"),
    ),
    Format(
        "attempt-generation",
        "generation.csv beside attempts.csv: each attempt's tokens, cost, time and feedback calls (tcsexam attempts generation)",
        ("tcsexam.scoring.generation:GENERATION_TABLE_VERSION",),
        _first("2026-12-06", "d82abba"),
    ),
    Format(
        "reference",
        "a fixed reference (references/*.json, a twin set's reference.json); its JSON Schema's const",
        ("tcsexam.scoring.reference:SCHEMA_VERSION",),
        _first("2026-11-30", "5e603ea"),
    ),
    Format(
        "relative-score",
        "relative.json of tcsexam solver-score",
        ("tcsexam.scoring.solver_score:OUTPUT_SCHEMA_VERSION",),
        _first("2026-11-30", "5e603ea"),
    ),
    Format(
        "solver-profile",
        "the JSON of tcsexam solver-score --profile and solver-profile",
        ("tcsexam.scoring.anytime_score:PROFILE_SCHEMA_VERSION",),
        _first("2026-12-01", "a329146"),
    ),
    Format(
        "index",
        "index.json of tcsexam score",
        ("tcsexam.scoring.index:OUTPUT_SCHEMA_VERSION",),
        _first("2026-11-30", "5e603ea"),
        kept=(Change(1, "2026-12-06", "d82abba", "cost per model and top-level cost, with --generation only"),),
    ),
    Format(
        "view-summary",
        "data/run.js of tcsexam view, the summary the explorer reads first",
        ("tcsexam.view.site:SITE_SCHEMA_VERSION",),
        _first("2026-12-03", "f7e7b34"),
        kept=(Change(1, "2026-12-06", "ab5a39d", "cost (Index against cost) and each leaderboard row's cost"),),
    ),
    Format(
        "twin-scan",
        "scan.json of tcsexam scan-candidate",
        ("tcsexam.twins.scan:SCAN_SCHEMA_VERSION",),
        _first("2026-12-03", "8d82267"),
    ),
)

#: output formats that say no version yet: (name, files); give one a constant and move it above
UNVERSIONED: tuple[tuple[str, str], ...] = (
    ("doctor-json", "the JSON of tcsexam doctor --json"),
    ("instance-table", "instances.csv / instances.parquet of tcsexam export (docs/export.md lists its columns)"),
)


def get_format(name: str) -> Format:
    """The format called `name`; KeyError naming the known ones otherwise."""
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise KeyError(f"no output format {name!r} (known: {', '.join(f.name for f in FORMATS)})")
