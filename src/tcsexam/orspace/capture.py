"""Evidence a Build/Revise program leaves for failure attribution (docs/orspace.md "Failure
attribution"), recorded while it runs in the sandbox.

`tcsexam orspace execute` puts this file, as `sitecustomize.py`, first on every program's
PYTHONPATH (`execute.helper_library`), so Python imports it at start-up when
`TCSEXAM_ORSPACE_EVIDENCE` names a folder (the program's scratch). It then records:

- every file the program opens (a `sys.addaudithook` "open" hook), written to `opened.json` when the
  interpreter exits (`atexit`: a program killed by a signal or by `os._exit` leaves none);
- the model of every PuLP `LpProblem.solve`, highspy `Highs.run`, gurobipy `Model.optimize` and
  coptpy `Model.solve`/`solveLP` call, written as an LP file (`model.lp`, the last one wins) just
  before the solver runs (a solve inside PuLP's own backend keeps PuLP's file: names and sense).

Standard library only (the OR-Space image has no tcsexam). The evidence is what the program let
happen: a program run with `-I`/`-S`, one that removes the hook, or one that never calls PuLP or
highspy, gurobipy or coptpy leaves less, and attribution then falls back to its static evidence. It is evidence, not a
security boundary (the sandbox is).
"""

import atexit
import importlib.abc
import importlib.machinery
import json
import os
import sys

EVIDENCE_ENV = "TCSEXAM_ORSPACE_EVIDENCE"
OPENED_FILE = "opened.json"
MODEL_FILE = "model.lp"
_MAX_OPENED = 10000


_MARK = "_tcsexam"  #: set on a wrapped solve method, so that it is wrapped once


class _Opened:
    """The files the program opens (a `sys.addaudithook` "open" hook), written at exit."""

    def __init__(self, folder: str):
        self.file = os.path.join(folder, OPENED_FILE)
        self.paths: list[str] = []
        self.seen: set[str] = set()

    def hook(self, event: str, args: tuple) -> None:
        if event != "open" or not args or len(self.seen) >= _MAX_OPENED:
            return
        target = args[0]
        if isinstance(target, int):
            return
        try:
            path = os.path.abspath(os.fsdecode(target))
        except (TypeError, ValueError):
            return
        if path not in self.seen and not path.endswith((".pyc", ".so")):
            self.seen.add(path)
            self.paths.append(path)

    def dump(self) -> None:
        try:
            with open(self.file, "w", encoding="utf-8") as handle:
                json.dump(self.paths, handle)
        except OSError:
            pass


class _Models:
    """The model of every solve, written as an LP file (the last one wins) just before it runs:
    each solver module is patched when the program imports it (`patches`)."""

    def __init__(self, folder: str):
        self.file = os.path.join(folder, MODEL_FILE)
        self.in_pulp: list[bool] = []  # non-empty while a PuLP solve runs: its own (named) LP file is the model
        self.patches = {
            "pulp.pulp": self.patch_pulp,
            "highspy": self.patch_highs,
            "gurobipy": self.patch_gurobi,
            "coptpy": self.patch_copt,
        }

    def patch_pulp(self, module) -> None:
        problem = getattr(module, "LpProblem", None)
        if problem is None or getattr(problem.solve, _MARK, False):
            return
        original = problem.solve
        file, in_pulp = self.file, self.in_pulp

        def solve(self, *args, **kwargs):
            try:
                self.writeLP(file)
            except Exception:  # noqa: BLE001 - evidence only: never change what the program does
                pass
            in_pulp.append(True)
            try:
                return original(self, *args, **kwargs)
            finally:
                in_pulp.pop()

        setattr(solve, _MARK, True)
        problem.solve = solve

    def wrap(self, cls, method: str, write) -> None:
        """Write the model (`write(self, path)`) just before `cls.method` runs, unless a PuLP solve
        is running (its backend's model is PuLP's, already written with its names)."""
        original = getattr(cls, method, None) if cls is not None else None
        if original is None or getattr(original, _MARK, False):
            return
        file, in_pulp = self.file, self.in_pulp

        def solve(self, *args, **kwargs):
            try:
                if not in_pulp:
                    write(self, file)
            except Exception:  # noqa: BLE001 - evidence only
                pass
            return original(self, *args, **kwargs)

        setattr(solve, _MARK, True)
        try:
            setattr(cls, method, solve)
        except (AttributeError, TypeError):
            pass

    def patch_highs(self, module) -> None:
        self.wrap(getattr(module, "Highs", None), "run", lambda model, path: model.writeModel(path))

    def patch_gurobi(self, module) -> None:
        self.wrap(getattr(module, "Model", None), "optimize", lambda model, path: model.write(path))

    def patch_copt(self, module) -> None:
        model = getattr(module, "Model", None)
        for method in ("solve", "solveLP"):
            self.wrap(model, method, lambda model, path: model.writeLp(path))


class _Finder(importlib.abc.MetaPathFinder):
    """Runs a solver module's patch right after the module itself, when the program imports it."""

    def __init__(self, patches: dict):
        self.patches = patches

    def find_spec(self, name, path, target=None):
        if name not in self.patches:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None) if spec else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module, patch = loader.exec_module, self.patches[name]

        def exec_module(module):
            run_module(module)
            try:
                patch(module)
            except Exception:  # noqa: BLE001 - evidence only
                pass

        loader.exec_module = exec_module
        return spec


def _install(folder: str) -> None:
    opened, models = _Opened(folder), _Models(folder)
    sys.addaudithook(opened.hook)
    sys.meta_path.insert(0, _Finder(models.patches))
    atexit.register(opened.dump)


_FOLDER = os.environ.get(EVIDENCE_ENV)
if _FOLDER and os.path.isdir(_FOLDER):
    _install(_FOLDER)
