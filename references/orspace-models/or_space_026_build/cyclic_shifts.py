"""Item 26: the day is a cycle of the table's consecutive periods; a person starting at a period's
beginning works continuously for the shift length, so covers that period and the next ones
(shift / period length of them, around the clock); at least the required number in each period;
minimise the number of people (whole)."""

from pathlib import Path

from tcsexam.orspace.refmodel import cyclic_cover, main, number, parameters, period_hours, table

READING = "cyclic 4-hour periods, shifts start at a period and cover consecutive periods; whole people"


def build(workspace: Path) -> dict:
    rows = table(workspace, "table_1")
    covers = int(round(number(parameters(workspace), "shift_duration") / period_hours(rows[0]["Time_Period"])))
    return cyclic_cover([float(r["Required_Salespeople"]) for r in rows], covers)


if __name__ == "__main__":
    main(build)
