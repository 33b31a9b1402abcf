"""A run in the Every Eval Ever schema (`tcsexam export --format eee`; docs/export.md says what maps
to what).

Per model of index.json, the datastore layout the schema's validator expects:

    OUT/data/<collection>/<developer>/<model>/<uuid>.json            the aggregate (EvaluationLog)
    OUT/data/<collection>/<developer>/<model>/<uuid>_samples.jsonl   per-instance records

`<collection>` is `tcsexam-<suite>-<protocol>`; `<developer>/<model>` is the model's id (`--model-id
NAME=DEVELOPER/MODEL`; default: the Inspect model of its generation records, e.g. `openai/gpt-4o`,
else `unknown/<name>`); the UUID is a version-4 UUID derived from the run's index.json, the model
and the timestamp, so the same run exports the same files.

The aggregate holds the Index, the four track means and every task mean that exists (a null one,
an incomplete result, is left out and listed in `source_metadata.additional_details`), each with
its bootstrap interval where index.json has one, the judge's settings (metric, reference,
protocol, weights, bootstrap) and the generation settings of the model's agent (temperature,
max tokens, limits, tools) when its records say them. Every file is checked against the schema
files vendored from the `every-eval-ever` wheel (`schemas/every-eval-ever-<version>/`, with their
provenance) before anything is written; CI also runs the package's own `validate` on them.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from functools import cache
from pathlib import Path
from typing import Any, TypeGuard

from tcsexam import __version__
from tcsexam.errors import InputError
from tcsexam.export.table import RunResults, instance_rows
from tcsexam.fileio import Json, JsonObject, read_json
from tcsexam.scoring.cost import SOLVED_AT
from tcsexam.scoring.generation import AttemptGeneration
from tcsexam.scoring.vocabulary import ADOPTED
from tcsexam.suites import TRACKS, Track

#: the Every Eval Ever schema version written, and where its schema files are vendored
EEE_SCHEMA_RELEASE = "0.3.0"
SCHEMA_DIR = Path(__file__).parent / "schemas" / f"every-eval-ever-{EEE_SCHEMA_RELEASE}"
AGGREGATE_SCHEMA = "eval.schema.json"
INSTANCE_SCHEMA = "instance_level_eval.schema.json"
UUID_NAMESPACE = uuid.UUID("6f1d4a52-6a3c-4c1e-9b37-2f0d7e1c8a11")  #: fixed: the same run exports the same UUIDs
#: the generation settings the schema's generation_args take from a generation record's model
GENERATION_KEYS = ("temperature", "max_tokens")


@cache
def schema(name: str) -> JsonObject:
    loaded: JsonObject = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))  # a bundled schema
    return loaded


def _validator(name: str):
    import jsonschema

    return jsonschema.Draft7Validator(schema(name))


def check_against_schema(data: Json, name: str, where: str) -> None:
    """Raise InputError naming `where` and the first violation of the vendored schema `name`."""
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise InputError(f"{where}: {path}: {e.message[:300]} (Every Eval Ever {EEE_SCHEMA_RELEASE} schema)")


def _strings(d: JsonObject) -> dict[str, str]:
    """A schema `additional_details` object: every value a string (None left out)."""
    out = {}
    for k, v in d.items():
        if v is None:
            continue
        out[k] = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return out


def _finite(x: object) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _model_records(run: RunResults, model: str) -> list[JsonObject]:
    """The generation records (decoded generation.json) of the model's adopted attempts."""
    out = []
    for (m, _t, _i, _a), gen in (run.generation or {}).items():
        if m == model and gen.recorded and gen.record and Path(gen.record).is_file():
            data = read_json(gen.record, "generation record")
            if isinstance(data, dict):
                out.append(data)
    return out


def default_model_id(name: str, records: list[JsonObject]) -> str:
    """The Inspect model of the generation records (`openai/gpt-4o`) when they all agree, else
    `unknown/<name>`."""
    specs = {str((r.get("model") or {}).get("model") or "") for r in records}
    providers = {str((r.get("model") or {}).get("provider") or "") for r in records}
    if len(specs) == 1 and (spec := specs.pop()):
        if "/" in spec:
            return spec
        if len(providers) == 1 and (provider := providers.pop()):
            return f"{provider}/{spec}"
    return f"unknown/{name}"


def _safe_component(text: str, what: str) -> str:
    if not text or text in (".", "..", "data") or any(c in text for c in '<>:"\\|?*') or text.endswith((".", " ")):
        raise InputError(f"{what} {text!r} is not a portable folder name (the datastore path uses it)")
    return text


def _interval(ci: Json, index: JsonObject) -> JsonObject | None:
    if not (isinstance(ci, list) and len(ci) == 2 and all(_finite(x) for x in ci)):
        return None
    boot = index.get("bootstrap") or {}
    out: JsonObject = {
        "confidence_interval": {
            "lower": float(ci[0]),
            "upper": float(ci[1]),
            "confidence_level": float(boot.get("confidence", 0.95)),
            "method": str(boot.get("method") or "percentile bootstrap"),
        }
    }
    if isinstance(boot.get("resamples"), int):
        out["num_bootstrap_samples"] = boot["resamples"]
    return out


def _metric(metric_id: str, name: str, kind: str, unit: str, low: float, high: Any, description: str, judge: dict):
    return {
        "evaluation_description": description,
        "metric_id": metric_id,
        "metric_name": name,
        "metric_kind": kind,
        "metric_unit": unit,
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": low,
        "max_score": high,
        "additional_details": judge,
    }


def _track_bound(track: str) -> Any:
    return "Infinity" if track == Track.CONSTRUCTION else 1.0


def _generation_config(records: list[JsonObject]) -> JsonObject | None:
    """The agent's settings shared by every record of the model (generation_args), with the
    record's tools and its run's limits."""
    if not records:
        return None
    args: JsonObject = {}
    for key in GENERATION_KEYS:
        values = {json.dumps((r.get("model") or {}).get(key)) for r in records}
        if len(values) == 1:
            value = json.loads(values.pop())
            if value is not None and (key != "max_tokens" or (isinstance(value, int) and value >= 1)):
                args[key] = value
    tools = sorted({name for r in records for name in (r.get("tool_calls_by_name") or {})})
    if tools:
        args["agentic_eval_config"] = {"available_tools": [{"name": t} for t in tools]}
    limits = _run_limits(records)
    if limits:
        args["eval_limits"] = limits
    model = records[0].get("model") or {}
    details = {
        "inspect_model": model.get("inspect_model"),
        "provider": model.get("provider"),
        "base_url": model.get("base_url"),
        "seed": model.get("seed"),
        "stop_reasons": sorted({str(r.get("stop_reason")) for r in records}),
        "note": "tools: those the agent called (tool_calls_by_name of its generation records)",
    }
    return {"generation_args": args, "additional_details": _strings(details)}


def _run_limits(records: list[JsonObject]) -> dict[str, int]:
    """message / token / time limits of the agent runs (run.json beside their logs), when all agree."""
    seen = set()
    for r in records:
        run_dir = r.get("run_dir")
        path = Path(run_dir) / "run.json" if isinstance(run_dir, str) and run_dir else None
        if path is None or not path.is_file():
            return {}
        limits = (read_json(path, "agent run file") or {}).get("limits") or {}
        seen.add(json.dumps(limits, sort_keys=True))
    if len(seen) != 1:
        return {}
    limits = json.loads(seen.pop())
    out = {}
    for ours, theirs in (("messages", "message_limit"), ("tokens", "token_limit"), ("time_s", "time_limit")):
        value = limits.get(ours)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[theirs] = int(value)
    return out


def _uuid(*parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("\0".join(parts).encode()).digest()[:16], version=4))


def _instance_record(row: JsonObject, base: JsonObject, gen: AttemptGeneration | None) -> JsonObject:
    track, item, attempt = row["track"], row["item"], row["attempt"]
    solver = track == Track.SOLVER
    score = row["instance_score"] if solver else row["attempt_score"]
    status = row["instance_status"] if solver else row["score_status"]
    if solver:
        shown = f"status {status}" + (f", value {row['instance_value']:g}" if row["instance_value"] is not None else "")
        extracted = "" if row["instance_value"] is None else f"{row['instance_value']:g}"
        reference = [] if row["reference_mu"] is None else [f"{row['reference_mu']:g}"]
        prompt = f"TCSExam Solver task {item}, instance {row['instance']}: the candidate's certificate, checked"
    else:
        shown = f"score {score:g} ({status})"
        extracted = f"{score:g}"
        reference = []
        prompt = f"TCSExam {track} item {item}: the submission, judged by the task's checker"
    out: JsonObject = {
        **base,
        "evaluation_name": f"tcsexam/{item}",
        "evaluation_result_id": f"task/{item}",
        "sample_id": f"{item}/{row['instance']}#{attempt}" if solver else f"{item}#{attempt}",
        "sample_hash": hashlib.sha256(f"{item}\0{row['instance']}".encode()).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": prompt, "reference": reference},
        "output": {"raw": [shown]},
        "messages": None,
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": extracted,
                "extraction_method": "tcsexam checker" if not solver else "tcsexam harness (certificate checked)",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": float(score), "is_correct": float(score) >= SOLVED_AT[track]},
    }
    if solver and row["wall_s"] is not None:
        out["performance"] = {"latency_ms": row["wall_s"] * 1000.0}
    if not solver and gen is not None and gen.recorded and gen.input_tokens is not None:
        out["token_usage"] = {
            "input_tokens": gen.input_tokens,
            "output_tokens": gen.output_tokens or 0,
            "total_tokens": gen.total_tokens
            if gen.total_tokens is not None
            else gen.input_tokens + (gen.output_tokens or 0),
        }
    meta = {
        "track": track,
        "item": item,
        "attempt": attempt,
        "instance": row["instance"],
        "adoption_status": row["adoption_status"],
        "status": status,
        "eligible": None if row["eligible"] is None else str(row["eligible"]).lower(),
        "reference_scale": row["reference_scale"],
        "attempt_score": row["attempt_score"],
        "attempt_cost_usd": None if gen is None else gen.cost_usd,
        "attempt_cost_missing": None if gen is None or gen.cost_missing is None else str(gen.cost_missing),
        "attempt_input_tokens": None if gen is None else gen.input_tokens,
        "attempt_output_tokens": None if gen is None else gen.output_tokens,
        "feedback_calls": None if gen is None else gen.feedback_calls,
        "transcript": None if gen is None else (gen.transcript or None),
    }
    out["metadata"] = _strings(meta)
    return out


def _results(run: RunResults, m: JsonObject, rows: list[JsonObject], source_data: dict, judge: dict):
    """The aggregate's evaluation_results (Index, track and task means that exist) and what is left out."""
    index = run.index
    suite_name = source_data["dataset_name"]
    results = []
    left_out = []
    if _finite(m.get("index")):
        results.append(
            {
                "evaluation_result_id": "index",
                "evaluation_name": f"tcsexam-{run.suite}-index",
                "source_data": source_data,
                "metric_config": _metric(
                    str(index.get("metric_id")),
                    "TCSExam Index",
                    "index",
                    "points",
                    0.0,
                    "Infinity",
                    "30 theorem + 30 Solver + 30 construction + 10 open-conjecture track means "
                    "(construction rewards may exceed 1, so the Index may exceed 100)",
                    judge,
                ),
                "score_details": _score(m["index"], m.get("index_ci95"), index, {"status": m.get("status")}),
            }
        )
    else:
        left_out.append(f"index ({m.get('status')})")
    for track in TRACKS:
        mean = (m.get("track_means") or {}).get(track)
        if not _finite(mean):
            left_out.append(f"track {track}")
            continue
        coverage = (m.get("coverage") or {}).get(track)
        results.append(
            {
                "evaluation_result_id": f"track/{track}",
                "evaluation_name": f"tcsexam-{run.suite}-{track}",
                "source_data": source_data,
                "metric_config": _metric(
                    f"tcsexam.track_mean.{track}",
                    f"{track} track mean",
                    "mean_score",
                    "proportion" if track != Track.CONSTRUCTION else "reward",
                    0.0,
                    _track_bound(track),
                    f"mean of the {track} task means (each the mean of its adopted attempts)",
                    judge,
                ),
                "score_details": _score(mean, (m.get("track_ci95") or {}).get(track), index, {"coverage": coverage}),
            }
        )
    track_of = {r["item"]: r["track"] for r in rows}
    for item, mean in (m.get("task_means") or {}).items():
        if not _finite(mean):
            left_out.append(f"task {item}")
            continue
        track = track_of.get(item, "")
        results.append(
            {
                "evaluation_result_id": f"task/{item}",
                "evaluation_name": f"tcsexam/{item}",
                "source_data": {**source_data, "dataset_name": f"{suite_name}: {item}"},
                "metric_config": _metric(
                    f"tcsexam.task_mean.{track or 'task'}",
                    f"{item} task mean",
                    "mean_score",
                    "proportion" if track != Track.CONSTRUCTION else "reward",
                    0.0,
                    _track_bound(track),
                    {
                        Track.SOLVER: "fixed-reference relative score (mean Phi(z) over the eligible instances)",
                        Track.CONSTRUCTION: "the checker's original reward",
                    }.get(track, "1 when the checker accepted a complete proof (or resolution), else 0"),
                    judge,
                ),
                "score_details": _score(mean, None, index, {"track": track}),
            }
        )
    return results, left_out


def export_eee(
    run: RunResults,
    *,
    organization: str = "tcsexam",
    relationship: str = "third_party",
    model_ids: dict[str, str] | None = None,
    timestamp: str | None = None,
) -> dict[str, str]:
    """The export's files: repository path (`data/...`) -> content. Every file checked against the
    vendored schema first (InputError naming the file and the violation)."""
    index = run.index
    model_ids = model_ids or {}
    unknown = sorted(set(model_ids) - set(run.models()))
    if unknown:
        raise InputError(f"--model-id names {unknown[0]!r}, which is not a model of {run.path / 'index.json'}")
    index_bytes = json.dumps(index, sort_keys=True).encode()
    stamp = timestamp or str(int((run.path / "index.json").stat().st_mtime))
    collection = _safe_component(f"tcsexam-{run.suite}-{run.protocol}", "collection")
    rows = instance_rows(run)
    judge = _strings(
        {
            "metric_id": index.get("metric_id"),
            "solver_protocol": run.protocol,
            "solver_reference_id": index.get("solver_reference_id"),
            "solver_reference_verified": index.get("solver_reference_verified"),
            "weights": index.get("weights"),
            "bootstrap_seed": (index.get("bootstrap") or {}).get("seed"),
            "judge": "tcsexam harness: Solver candidates run in the project's sandbox and their certificates checked; "
            "proofs by coqc; constructions by the task's checker",
        }
    )
    suite_name = f"TCSExam {run.suite.capitalize()}"
    source_data = {
        "dataset_name": suite_name,
        "source_type": "other",
        "additional_details": {"suite": run.suite, "note": "the tasks ship with tcsexam (config/suites)"},
    }
    files: dict[str, str] = {}
    for model, m in index["models"].items():
        records = _model_records(run, model)
        model_id = model_ids.get(model) or default_model_id(model, records)
        if model_id.count("/") < 1:
            raise InputError(
                f"model {model!r}: id {model_id!r} must read DEVELOPER/MODEL (--model-id {model}=DEV/NAME)"
            )
        developer, _, model_part = model_id.partition("/")
        folder = (
            f"data/{collection}/{_safe_component(developer, 'developer')}/"
            f"{_safe_component(model_part.replace('/', '-'), 'model')}"
        )
        file_uuid = _uuid(hashlib.sha256(index_bytes).hexdigest(), model, stamp)
        evaluation_id = f"{collection}/{model_id}/{stamp}"
        results, left_out = _results(run, m, rows, source_data, judge)
        generation = _generation_config(records)
        if generation is not None:
            for r in results:
                r["generation_config"] = generation
        base = {
            "schema_version": EEE_SCHEMA_RELEASE,
            "evaluation_id": evaluation_id,
            "model_id": model_id,
        }
        samples = [
            _instance_record(r, base, (run.generation or {}).get((r["model"], r["track"], r["item"], r["attempt"])))
            for r in rows
            if r["model"] == model
            and r["adoption_status"] in ADOPTED
            and (r["instance_score"] if r["track"] == Track.SOLVER else r["attempt_score"]) is not None
        ]
        samples_text = "".join(json.dumps(s, sort_keys=True, allow_nan=False) + "\n" for s in samples)
        aggregate = _aggregate(run, model, m, evaluation_id, stamp, (model_id, developer), results, left_out, judge)
        aggregate["source_metadata"].update(source_name=f"{suite_name} ({run.protocol} Solver protocol)")
        aggregate["source_metadata"].update(source_organization_name=organization, evaluator_relationship=relationship)
        if samples:
            aggregate["detailed_evaluation_results"] = {
                "format": "jsonl",
                "file_path": f"{folder}/{file_uuid}_samples.jsonl",
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(samples_text.encode()).hexdigest(),
                "total_rows": len(samples),
            }
        if not results:
            raise InputError(
                f"model {model!r} has no Index, track or task mean in {run.path / 'index.json'}: nothing to export"
            )
        check_against_schema(aggregate, AGGREGATE_SCHEMA, f"{folder}/{file_uuid}.json")
        for number, s in enumerate(samples, start=1):
            check_against_schema(s, INSTANCE_SCHEMA, f"{folder}/{file_uuid}_samples.jsonl: line {number}")
        files[f"{folder}/{file_uuid}.json"] = json.dumps(aggregate, indent=2, sort_keys=True, allow_nan=False) + "\n"
        if samples:
            files[f"{folder}/{file_uuid}_samples.jsonl"] = samples_text
    return files


def _aggregate(run, model, m, evaluation_id, stamp, ident, results, left_out, judge) -> JsonObject:
    """The aggregate without its samples reference (source name, organization and relationship
    filled in by the caller)."""
    model_id, developer = ident
    cost = m.get("cost") or {}
    details = {
        "status": m.get("status"),
        "left_out_null": left_out or None,
        "issues": len(m.get("issues") or []),
        # a missing cost is said, never left out or given as 0
        "cost_usd": cost.get("cost_usd") if cost.get("cost_usd") is not None or not cost else "unknown",
        "cost_missing": cost.get("cost_missing"),
        "cost_per_solved_item": cost.get("cost_per_solved_item"),
        "input_tokens": cost.get("input_tokens"),
        "output_tokens": cost.get("output_tokens"),
        "feedback_calls": cost.get("feedback_calls"),
        "tcsexam_model_name": model,
    }
    return {
        "schema_version": EEE_SCHEMA_RELEASE,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": stamp,
        "source_metadata": {"source_type": "evaluation_run", "additional_details": _strings(details)},
        "eval_library": {"name": "tcsexam", "version": __version__, "additional_details": judge},
        "model_info": {
            "name": model,
            "id": model_id,
            "developer": developer,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": results,
    }


def _score(value: float, ci: Json, index: JsonObject, details: JsonObject) -> JsonObject:
    out: JsonObject = {"score": float(value), "details": _strings(details)}
    uncertainty = _interval(ci, index)
    if uncertainty is not None:
        out["uncertainty"] = uncertainty
    return out
