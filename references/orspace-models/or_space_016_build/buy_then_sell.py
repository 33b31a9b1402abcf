"""Item 16: each month the store buys at the start (stock plus purchase within the warehouse
capacity), then sells at most what it holds; the initial stock is available in month 1; maximise
sales revenue minus purchase cost."""

from pathlib import Path

from tcsexam.orspace.refmodel import buy_then_sell, main, number, parameters, table

READING = "buy at the start of a month within capacity, then sell from stock plus purchase"


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    return buy_then_sell(
        [float(r["Purchasing_Price_Yuan"]) for r in rows],
        [float(r["Selling_Price_Yuan"]) for r in rows],
        number(v, "initial_stock"),
        number(v, "warehouse_capacity"),
    )


if __name__ == "__main__":
    main(build)
