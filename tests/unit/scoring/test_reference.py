"""The reference file format: validation, build from K runs, merge, check --subset-of."""

from __future__ import annotations

import copy
import json

import pytest

from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.scoring.reference import build_reference, check_subset, merge_references, reference_from_dict


def test_loads_the_issue_example():
    data = {
        "schema_version": 1,
        "reference_id": "r",
        "suite": "lite",
        "scale_floors": {"relative": 0.02, "absolute": 1e-9},
        "tasks": {
            "maxcut-mqlib": {"kind": "objective", "direction": "maximize", "instances": {"G1": [11500, 11510, 11490]}}
        },
        "unscored_reference_instances": {"maxcut-mqlib": {"G81": [14000]}},
    }
    ref = reference_from_dict(data)
    task = ref.task("maxcut-mqlib")
    assert task.mu.tolist() == [11500.0] and task.sd.tolist() == [10.0] and task.scale.tolist() == [230.0]
    assert task.unscored == {"G81": [14000]} and ref.n_eligible == 1 and ref.n_unscored == 1
    assert reference_from_dict(ref.to_dict()).to_dict() == ref.to_dict()


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda d: d.pop("scale_floors"), "missing key 'scale_floors'"),
        (lambda d: d["scale_floors"].pop("absolute"), "scale_floors: missing key 'absolute'"),
        (lambda d: d["scale_floors"].update(absolute=0), "scale_floors.absolute: must be > 0"),
        (lambda d: d["scale_floors"].update(relative=-1), "scale_floors.relative: must be >= 0"),
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d.update(reference_id=""), "reference_id"),
        (lambda d: d.update(extra=1), "unknown key(s) extra"),
        (lambda d: d.update(tasks={}), "tasks: must be a non-empty"),
        (lambda d: d["tasks"]["t"].update(kind="score"), "task 't': kind"),
        (lambda d: d["tasks"]["t"].update(direction="up"), "task 't': direction"),
        (lambda d: d["tasks"]["t"].pop("direction"), "task 't': missing key 'direction'"),
        (lambda d: d["tasks"]["t"]["instances"].update(G2=[1, None]), "task 't' instance 'G2': 1 usable value"),
        (lambda d: d["tasks"]["t"]["instances"].update(G2=[1, "2"]), "task 't' instance 'G2': value 2"),
        (lambda d: d["tasks"]["t"]["instances"].update(G2=[1, True]), "task 't' instance 'G2': value 2"),
        (lambda d: d["tasks"]["t"]["instances"].update(G2=5), "task 't' instance 'G2': values must be a list"),
        (lambda d: d["unscored_reference_instances"].update(x={}), "task 'x' is not in tasks"),
        (lambda d: d["unscored_reference_instances"]["t"].update(G1=[1]), "instance 'G1': listed both"),
        (lambda d: d["unscored_reference_instances"]["t"].update(G9=["a"]), "instance 'G9': value 1"),
        (lambda d: d["scale_floors"].update(relative=float("nan")), "scale_floors.relative: must be a finite number"),
        (
            lambda d: d["tasks"]["t"].update(scale_floors={"absolute": "x"}),
            "task 't': scale_floors.absolute: must be a",
        ),
        (lambda d: d["tasks"]["t"]["instances"].update({"": [1, 2]}), "task 't': instances: an instance name is empty"),
        (lambda d: d["tasks"]["t"].update(extra=1), "task 't': unknown key(s) extra"),
        (lambda d: d.update(schema_version=True), "schema_version: must be 1"),
    ],
)
def test_validation_names_task_and_instance(h, mutate, needle):
    data = h.reference_dict(tasks={"t": ("objective", "maximize", {"G1": [1, 2, 3]})}, unscored={"t": {"G81": [None]}})
    mutate(data)
    with pytest.raises(InputError, match=None) as exc:
        reference_from_dict(data, "ref.json")
    msg = str(exc.value)
    assert needle in msg and msg.startswith("ref.json") and "\n" not in msg


def test_solve_values_accept_booleans_and_01_only(h):
    reference_from_dict(h.reference_dict(tasks={"s": ("solve", "maximize", {"a": [True, 0, 1.0, None]})}))
    with pytest.raises(InputError, match="instance 'a': value 1"):
        reference_from_dict(h.reference_dict(tasks={"s": ("solve", "maximize", {"a": [2, 1]})}))


def _runs():
    r1 = [
        {"instance": "a", "status": "ok", "A": 10},
        {"instance": "b", "status": "ok", "A": 5},
        {"instance": "c", "status": "timeout"},
    ]
    r2 = [
        {"instance": "b", "status": "ok", "A": 6.5},
        {"instance": "a", "status": "ok", "A": 12},
        {"instance": "c", "status": "crash"},
    ]
    r3 = [
        {"instance": "a", "status": "ok", "A": 14},
        {"instance": "b", "status": "memout"},
        {"instance": "c", "status": "ok", "A": 3},
    ]
    return [("r1.json", r1), ("r2.json", r2), ("r3.json", r3)]


def test_build_from_three_runs():
    data = build_reference("t", "objective", "maximize", _runs(), "my-ref-v1", suite="lite")
    assert data["tasks"]["t"]["instances"] == {"a": [10, 12, 14], "b": [5, 6.5, None]}
    assert data["unscored_reference_instances"] == {"t": {"c": [None, None, 3]}}
    ref = reference_from_dict(data)
    assert ref.task("t").mu.tolist() == [12.0, 5.75] and ref.reference_id == "my-ref-v1"


def test_build_solve_counts_completed_failures_as_unsolved():
    runs = [(f"r{k}", [{"instance": "x", "status": s, "solved": True}]) for k, s in enumerate(["ok", "timeout", "ok"])]
    data = build_reference("sat", "solve", "maximize", runs, "r")
    assert data["tasks"]["sat"]["instances"] == {"x": [True, False, True]}


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda runs: runs[1][1].pop(), "r2.json: instance 'c' is missing"),
        (
            lambda runs: runs[2][1].append({"instance": "d", "status": "ok", "A": 1}),
            "r3.json: instance 'd' is not in r1.json",
        ),
        (
            lambda runs: runs[1][1][0].update(status="infrastructure_error"),
            "r2.json: instance 'b': status infrastructure_error",
        ),
        (lambda runs: runs[0][1].append(dict(runs[0][1][0])), "r1.json: instance 'a': duplicate"),
        (lambda runs: runs.pop() and runs.pop(), "at least two runs"),
    ],
)
def test_build_refusals(edit, needle):
    runs = _runs()
    edit(runs)
    with pytest.raises(InputError) as exc:
        build_reference("t", "objective", "maximize", runs, "r")
    assert needle in str(exc.value)


def test_build_refuses_when_nothing_is_eligible():
    runs = [("r1", [{"instance": "x", "status": "timeout"}]), ("r2", [{"instance": "x", "status": "ok", "A": 1}])]
    with pytest.raises(InputError, match="no instance has two usable outcomes"):
        build_reference("t", "objective", "minimize", runs, "r")


def test_merge_and_subset(h):
    a = reference_from_dict(
        h.reference_dict(tasks={"t1": ("objective", "maximize", {"x": [1, 2]})}, ref_id="R"), "a.json"
    )
    b_data = h.reference_dict(
        tasks={"t2": ("solve", "maximize", {"y": [True, True]})},
        ref_id="R",
        unscored={"t2": {"z": [None]}},
        floors={"relative": 0.1, "absolute": 1e-6},
    )
    b = reference_from_dict(b_data, "b.json")
    full_data = merge_references([a, b], suite="full")
    assert full_data["tasks"]["t2"]["scale_floors"] == {"relative": 0.1, "absolute": 1e-6}
    assert "scale_floors" not in full_data["tasks"]["t1"] and full_data["suite"] == "full"
    full = reference_from_dict(full_data, "full.json")
    assert full.task("t2").relative_floor == 0.1 and full.task("t2").unscored == {"z": [None]}
    lite = reference_from_dict(merge_references([full], suite="lite", tasks=["t2"]), "lite.json")
    assert list(lite.tasks) == ["t2"]
    check_subset(lite, full)
    changed = copy.deepcopy(lite.to_dict())
    changed["tasks"]["t2"]["instances"]["y"] = [True, False]
    with pytest.raises(InputError, match="lite.json: task 't2' instance 'y': values"):
        check_subset(reference_from_dict(changed, "lite.json"), full)
    other_id = reference_from_dict(
        h.reference_dict(tasks={"t3": ("objective", "maximize", {"x": [1, 2]})}, ref_id="S"), "c.json"
    )
    with pytest.raises(InputError, match="c.json: reference_id 'S' differs"):
        merge_references([a, other_id])
    with pytest.raises(InputError, match="task 't1' is also in a.json"):
        merge_references([a, a])


def test_reference_cli_build_merge_check(h, tmp_path, capsys):
    paths = []
    for name, records in _runs():
        paths.append(str(h.write_json(tmp_path / name, records)))
    one = tmp_path / "t.json"
    assert (
        main(
            [
                "reference",
                "build",
                "--task",
                "t",
                "--kind",
                "objective",
                "--direction",
                "maximize",
                "--runs",
                *paths,
                "--id",
                "bundled-v1",
                "--output",
                str(one),
            ]
        )
        == 0
    )
    other = h.write_json(
        tmp_path / "u.json",
        h.reference_dict(tasks={"u": ("objective", "minimize", {"q": [3, 4]})}, ref_id="bundled-v1"),
    )
    full = tmp_path / "full.json"
    lite = tmp_path / "lite.json"
    assert main(["reference", "merge", str(one), str(other), "--suite", "full", "--output", str(full)]) == 0
    assert main(["reference", "merge", str(full), "--tasks", "u", "--suite", "lite", "--output", str(lite)]) == 0
    capsys.readouterr()
    assert main(["reference", "check", str(lite), "--subset-of", str(full)]) == 0
    assert "every task and value matches" in capsys.readouterr().out
    data = json.loads(lite.read_text())
    data["tasks"]["u"]["instances"]["q"] = [3, 5]
    lite.write_text(json.dumps(data))
    assert main(["reference", "check", str(lite), "--subset-of", str(full)]) == 1
    assert "instance 'q'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1')
    assert main(["reference", "check", str(bad)]) == 1
    assert "bad.json: malformed reference file" in capsys.readouterr().err
    out = tmp_path / "never.json"
    assert (
        main(
            [
                "reference",
                "build",
                "--task",
                "t",
                "--kind",
                "objective",
                "--direction",
                "maximize",
                "--runs",
                paths[0],
                "--id",
                "x",
                "--output",
                str(out),
            ]
        )
        == 1
    )
    assert not out.exists()


def test_build_takes_kind_and_direction_from_the_task_file(h, tmp_path, monkeypatch, capsys):
    from tcsexam import paths

    root = tmp_path / "proj"
    (root / "config" / "suites").mkdir(parents=True)
    (root / "config" / "tasks").mkdir()
    (root / "config" / "tasks" / "tsp-x.yaml").write_text(
        "id: tsp-x\nproblem: tsp\nkind: objective\ndirection: minimize\nlimits: {wall_s: 2}\n"
        "instance_dir: references/instances/tsp-x\ninstances: [{name: a, file: a.tsp}]\n"
    )
    monkeypatch.setenv("TCSEXAM_ROOT", str(root))
    paths.project_root.cache_clear()
    try:
        runs = [
            str(h.write_json(tmp_path / f"r{k}.json", [{"instance": "a", "status": "ok", "A": 100 + k}]))
            for k in range(3)
        ]
        out = tmp_path / "ref.json"
        assert main(["reference", "build", "--task", "tsp-x", "--runs", *runs, "--id", "v1", "--output", str(out)]) == 0
        task = json.loads(out.read_text())["tasks"]["tsp-x"]
        assert (task["kind"], task["direction"], task["instances"]) == ("objective", "minimize", {"a": [100, 101, 102]})
        assert (
            main(
                [
                    "reference",
                    "build",
                    "--task",
                    "nope",
                    "--runs",
                    *runs,
                    "--id",
                    "v1",
                    "--output",
                    str(tmp_path / "n.json"),
                ]
            )
            == 1
        )
        assert "nope.yaml: task file not found" in capsys.readouterr().err
    finally:
        paths.project_root.cache_clear()


def test_merge_carry_to_keeps_values_under_a_new_id(h, tmp_path, capsys):
    """A new reference version keeps the frozen values of the tasks it does not rebuild."""
    old = h.write_json(
        tmp_path / "old.json",
        h.reference_dict(
            tasks={"u": ("objective", "minimize", {"q": [3, 4], "r": [5, 5, 6]})},
            unscored={"u": {"s": [7, None, None]}},
            ref_id="bundled-v1",
        ),
    )
    carried = tmp_path / "carried.json"
    args = ["reference", "merge", str(old), "--tasks", "u", "--carry-to", "bundled-v2", "--output", str(carried)]
    assert main(args) == 0
    data = json.loads(carried.read_text())
    assert data["reference_id"] == "bundled-v2" and data["metadata"]["carried_from"] == "bundled-v1"
    assert data["tasks"]["u"]["instances"] == {"q": [3, 4], "r": [5, 5, 6]}
    assert data["unscored_reference_instances"] == {"u": {"s": [7, None, None]}}
    new = h.write_json(
        tmp_path / "new.json",
        h.reference_dict(tasks={"w": ("objective", "maximize", {"z": [1, 2]})}, ref_id="bundled-v2"),
    )
    full = tmp_path / "full.json"
    assert main(["reference", "merge", str(carried), str(new), "--output", str(full)]) == 0
    merged = json.loads(full.read_text())
    assert merged["metadata"]["carried_tasks"] == {"u": "bundled-v1"}
    lite = tmp_path / "lite.json"
    assert main(["reference", "merge", str(full), "--tasks", "u", "--output", str(lite)]) == 0
    capsys.readouterr()
    assert main(["reference", "check", str(lite), "--subset-of", str(full)]) == 0
    assert main(["reference", "merge", str(old), "--carry-to", " ", "--output", str(lite)]) == 1
