"""Suites: config/suites/lite.yaml and full.yaml, and the suite loader's checks."""

from __future__ import annotations

import pytest

from tcsexam.errors import InputError
from tcsexam.scoring.reference import load_reference
from tcsexam.suites import TRACKS, load_suite, normalize_track

LITE_SOLVER = ("maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf")


def test_lite_has_twenty_tasks_five_per_track(lite):
    assert lite.id == "lite" and tuple(lite.tracks) == TRACKS
    assert all(len(items) == 5 for items in lite.tracks.values()) and len(lite.items) == 20
    assert lite.tracks["solver"] == LITE_SOLVER


def test_full_holds_lite_and_more_per_track(lite, full):
    assert full.id == "full"
    for track in TRACKS:
        assert set(lite.tracks[track]) < set(full.tracks[track]), track
    assert set(full.tracks["solver"]) - set(LITE_SOLVER) == {
        "maxcut-gset-large",
        "tsp-tsplib-large",
        "sat-random3",
        "maxcut-random",
        "tsp-random",
        "coloring-random",
        "maxsat-random",
        "tsp-random-large",
    }


def test_bundled_references_match_the_suites(project_root, lite, full):
    """When the workflow has built references/lite.json and full.json, their tasks are the suites'
    Solver tasks and Lite is the matching subset of Full."""
    from tcsexam.scoring.reference import check_subset

    paths = {name: project_root / "references" / f"{name}.json" for name in ("lite", "full")}
    if not all(p.exists() for p in paths.values()):
        pytest.skip("references/lite.json and full.json are not built yet")
    lite_ref, full_ref = load_reference(paths["lite"]), load_reference(paths["full"])
    assert tuple(lite_ref.tasks) == lite.tracks["solver"]
    assert set(full_ref.tasks) == set(full.tracks["solver"])
    check_subset(lite_ref, full_ref)


def test_track_spellings():
    assert normalize_track("Open-Conjecture") == "open_conjecture"
    assert normalize_track("open conjecture") == "open_conjecture"
    assert normalize_track(" Solver ") == "solver"
    assert normalize_track("theorems") is None and normalize_track("open-conjectures") is None


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "a suite must be a mapping"),
        ("id: x\ntracks: {theorem: [a], solver: [b], construction: [c]}\n", "track 'open_conjecture' is missing"),
        (
            "id: x\ntracks: {theorem: [a], solver: [a], construction: [c], open_conjecture: [d]}\n",
            "task 'a' is listed twice",
        ),
        ("id: x\ntracks: {theorem: [a], proofs: [b]}\n", "unknown track 'proofs'"),
        (
            "id: x\ntracks: {theorem: [], solver: [b], construction: [c], open_conjecture: [d]}\n",
            "needs a non-empty list",
        ),
        ("id: x\ntracks: {theorem: [a], Theorem: [b]}\n", "given twice"),
        ("id: x\ntracks: [\n", "malformed suite file"),
    ],
)
def test_bad_suites(tmp_path, text, needle):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_suite(path)
    assert needle in str(exc.value) and str(path) in str(exc.value)
