"""Item 1's model, shared by its readings. Eight weeks (the rows of `table_1`). Each week every
skilled worker either trains new workers (a training batch lasts the training period, two weeks, in
which the trainer and the trainees do not produce; a trainer takes at most `training_capacity`
trainees), works the regular weekly hours (regular weekly wage), or works the overtime weekly hours
(overtime weekly wage). Trainees earn the training wage while training and the after-training wage
once trained, and then work the regular weekly hours at the skilled workers' rates. The training
goal: at least the goal number of new workers trained by the end of week 8. Each working hour makes
food I or food II at the per-worker rate; food made early may be kept for later weeks; demand not
yet delivered at a week's end costs the compensation fee per kg for that week. Whole workers.
Minimise wages (skilled, trainees, new workers) plus compensation. `clear_by_week_8`: every order
is delivered by the end of week 8; otherwise what is still owed then is charged week 8's fee only."""

from pathlib import Path

import pulp

from tcsexam.orspace.refmodel import number, parameters, solve, table

FOODS = ("I", "II")


def build(workspace: Path, clear_by_week_8: bool) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    weeks = range(len(rows))
    span = int(number(v, "training_period"))
    demand = {(f, t): float(rows[t][f]) for f in FOODS for t in weeks}
    skilled = number(v, "skilled_worker_count")
    hours, extra = number(v, "worker_weekly_hours"), number(v, "skilled_worker_overtime_hours")
    rate = {f: number(v, f"food_{f}_production_rate") for f in FOODS}

    def weekly(name: str, kind: str = "Integer") -> list:
        return [pulp.LpVariable(f"{name}_{t}", lowBound=0, cat=kind) for t in weeks]

    trainers, trainees, overtime = weekly("trainers"), weekly("trainees"), weekly("overtime")
    made = {f: weekly(f"hours_{f}", "Continuous") for f in FOODS}
    owed = {f: weekly(f"owed_{f}", "Continuous") for f in FOODS}
    ahead = {f: weekly(f"ahead_{f}", "Continuous") for f in FOODS}
    for t in weeks:
        if t + span > len(rows):  # a batch must end by week 8
            trainers[t].upBound = trainees[t].upBound = 0
    prob = pulp.LpProblem("item1", pulp.LpMinimize)
    cost = []
    for t in weeks:
        training = pulp.lpSum(trainers[s] for s in weeks if s <= t < s + span)
        learning = pulp.lpSum(trainees[s] for s in weeks if s <= t < s + span)
        trained = pulp.lpSum(trainees[s] for s in weeks if s + span <= t)
        regular = skilled - training - overtime[t]
        prob += regular >= 0
        prob += trainees[t] <= number(v, "training_capacity") * trainers[t]
        prob += pulp.lpSum(made[f][t] for f in FOODS) <= hours * (regular + trained) + extra * overtime[t]
        cost.append(
            number(v, "skilled_worker_weekly_wage") * (skilled - overtime[t])
            + number(v, "skilled_worker_overtime_wage") * overtime[t]
            + number(v, "trainee_weekly_wage_during_training") * learning
            + number(v, "trainee_weekly_wage_after_training") * trained
        )
        for f in FOODS:
            before = ahead[f][t - 1] - owed[f][t - 1] if t else 0
            prob += ahead[f][t] - owed[f][t] == before + rate[f] * made[f][t] - demand[f, t]
            cost.append(number(v, f"compensation_fee_food_{f}") * owed[f][t])
    prob += pulp.lpSum(trainees) >= number(v, "new_worker_training_goal")
    if clear_by_week_8:
        for f in FOODS:
            prob += owed[f][len(rows) - 1] == 0
    prob += pulp.lpSum(cost)
    return solve(prob)
