"""Item 62: buy each restaurant at most once within the budget; if restaurant D is bought,
restaurant A is not; maximise the annual income."""

from pathlib import Path

from tcsexam.orspace.refmodel import knapsack, main, number, parameters, table

READING = "0/1 choice of each restaurant within the budget; restaurant D excludes restaurant A; maximise annual income"


def build(workspace: Path) -> dict:
    rows = {r["Restaurant"]: r for r in table(workspace, "table_1")}
    return knapsack(
        {k: float(r["Annual_Revenue"]) for k, r in rows.items()},
        {k: float(r["Cost"]) for k, r in rows.items()},
        number(parameters(workspace), "investment_budget"),
        [("Restaurant_D", "Restaurant_A")],
    )


if __name__ == "__main__":
    main(build)
