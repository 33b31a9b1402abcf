"""Item 74 (probe): the docs give activity durations, precedences, a daily work cost and a daily
rental of a special machine, but neither the objective nor which activities need the machine. This
probe assumes the project is done in its shortest time (the critical path) and both the work and
the machine are paid for every day of it. Both are assumptions, so the model is a probe."""

from pathlib import Path

from tcsexam.orspace.refmodel import main, number, optimum, parameters, table

READING = "assumed: shortest project, daily work cost and machine rental paid for every project day"
EVIDENCE = False


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    duration = {
        k.split("_")[1]: float(val) for k, val in v.items() if k.startswith("activity_") and k.endswith("_duration")
    }
    before = {a: [r["Predecessor"] for r in table(workspace, "table_1") if r["Successor"] == a] for a in duration}
    finish: dict[str, float] = {}

    def end(a: str) -> float:
        if a not in finish:
            finish[a] = max((end(p) for p in before[a]), default=0.0) + duration[a]
        return finish[a]

    length = max(end(a) for a in duration)
    return optimum(
        length * (number(v, "work_cost_per_day") + number(v, "machine_rental_cost_per_day")), "critical path"
    )


if __name__ == "__main__":
    main(build)
