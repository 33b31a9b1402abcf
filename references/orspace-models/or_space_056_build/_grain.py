"""Item 56's model, shared by its readings: each month the company sells grain it held at the
start of the month (grain bought in a month is delivered that month and can be sold only from the
next), and buys grain, paid on delivery from the cash in hand (the initial funds plus sales so far
minus purchases so far, this month's sales included); the stock at the end of the quarter equals
the target; maximise sales revenue minus purchase cost. The warehouse limit reads two ways:
`sell_first` (the month's sales leave before its purchase arrives: start stock - sales + purchase
within capacity) or not (start stock + purchase within capacity)."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table


def build(workspace: Path, sell_first: bool) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    months = range(len(rows))
    buy = [pulp.LpVariable(f"buy_{t}", lowBound=0) for t in months]
    sell = [pulp.LpVariable(f"sell_{t}", lowBound=0) for t in months]
    price = [float(r["Purchase_Price_yuan_per_dan"]) for r in rows]
    sale = [float(r["Selling_Price_yuan_per_dan"]) for r in rows]
    prob = pulp.LpProblem("item56", pulp.LpMaximize)
    prob += pulp.lpSum(sale[t] * sell[t] - price[t] * buy[t] for t in months)
    stock = number(v, "initial_stock")
    cash = number(v, "initial_funds")
    for t in months:
        prob += sell[t] <= stock
        prob += (stock - sell[t] if sell_first else stock) + buy[t] <= number(v, "warehouse_capacity")
        cash = cash + sale[t] * sell[t] - price[t] * buy[t]
        prob += cash >= 0
        stock = stock - sell[t] + buy[t]
    prob += stock == number(v, "end_of_quarter_inventory")
    return solve(prob)
