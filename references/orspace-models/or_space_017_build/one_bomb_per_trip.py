"""Item 17: every trip carries one bomb to one key part and flies back empty; its fuel is the
distance out at the loaded efficiency plus the distance back at the empty efficiency plus the
take-off-and-landing fuel; bombs within stock, total fuel within the limit; the parts are destroyed
independently (a part survives each bomb aimed at it with 1 - its destruction probability);
maximise P(at least `min_parts_destroyed` parts destroyed). Non-linear: solved by exhaustive
search over every allocation of heavy and light bombs to the parts (numpy)."""

import itertools
from pathlib import Path

import numpy as np

from tcsexam.orspace.refmodel import main, number, optimum, parameters, table

READING = (
    "one bomb per trip, fuel = out loaded + back empty + take-off/landing; exhaustive search over all bomb allocations"
)


def _allocations(parts: int, most: int) -> np.ndarray:
    """Every vector of `parts` non-negative integers with sum <= most."""
    return np.array([c for c in itertools.product(range(most + 1), repeat=parts) if sum(c) <= most], dtype=np.int64)


def _at_least(destroyed: np.ndarray, k: int) -> np.ndarray:
    """P(at least k of the independent events happen), rows of per-part probabilities."""
    dist = np.zeros((destroyed.shape[0], destroyed.shape[1] + 1))
    dist[:, 0] = 1.0
    for i in range(destroyed.shape[1]):
        p = destroyed[:, i : i + 1]
        dist[:, 1:] = dist[:, 1:] * (1 - p) + dist[:, :-1] * p
        dist[:, 0] *= 1 - p[:, 0]
    return dist[:, k:].sum(axis=1)


def build(workspace: Path) -> dict:
    v = parameters(workspace)
    rows = table(workspace, "table_1")
    dist = np.array([float(r["Distance_from_Airport_km"]) for r in rows])
    p_heavy = np.array([float(r["Probability_of_Destruction_per_Heavy_Bomb"]) for r in rows])
    p_light = np.array([float(r["Probability_of_Destruction_per_Light_Bomb"]) for r in rows])
    back = dist / number(v, "fuel_efficiency_empty")
    takeoff = number(v, "fuel_takeoff_landing")
    fuel_heavy = dist / number(v, "fuel_efficiency_heavy_bomb") + back + takeoff
    fuel_light = dist / number(v, "fuel_efficiency_light_bomb") + back + takeoff
    limit = number(v, "fuel_limit")
    need = int(number(v, "min_parts_destroyed"))
    most_heavy = min(int(number(v, "max_heavy_bombs")), int(limit // fuel_heavy.min()))
    heavy = _allocations(len(rows), most_heavy)
    light = _allocations(len(rows), min(int(number(v, "max_light_bombs")), int(limit // fuel_light.min())))
    heavy_fuel, light_fuel = heavy @ fuel_heavy, light @ fuel_light
    heavy_survive = (1 - p_heavy) ** heavy
    best = -1.0
    for lf, ls in zip(light_fuel, (1 - p_light) ** light, strict=True):
        ok = heavy_fuel + lf <= limit + 1e-9
        if ok.any():
            best = max(best, float(_at_least(1 - heavy_survive[ok] * ls, need).max()))
    return optimum(best, "enumeration")


if __name__ == "__main__":
    main(build)
