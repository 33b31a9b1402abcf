"""Item 72: buy each property at most once within the budget; if property 4 is bought,
property 3 is not; maximise the annual income."""

from pathlib import Path

from tcsexam.orspace.refmodel import knapsack, main, number, parameters, table

READING = "0/1 choice of each property within the budget; property 4 excludes property 3; maximise annual income"


def build(workspace: Path) -> dict:
    rows = {r["Property"]: r for r in table(workspace, "table_1")}
    return knapsack(
        {k: float(r["Annual_Income"]) for k, r in rows.items()},
        {k: float(r["Cost"]) for k, r in rows.items()},
        number(parameters(workspace), "budget"),
        [("Property_4", "Property_3")],
    )


if __name__ == "__main__":
    main(build)
