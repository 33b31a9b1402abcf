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


def _install(folder):
    opened = []
    seen = set()

    def hook(event, args):
        if event != "open" or not args or len(seen) >= _MAX_OPENED:
            return
        target = args[0]
        if isinstance(target, int):
            return
        try:
            path = os.path.abspath(os.fsdecode(target))
        except (TypeError, ValueError):
            return
        if path not in seen and not path.endswith((".pyc", ".so")):
            seen.add(path)
            opened.append(path)

    def dump():
        try:
            with open(os.path.join(folder, OPENED_FILE), "w", encoding="utf-8") as handle:
                json.dump(opened, handle)
        except OSError:
            pass

    in_pulp = []  # non-empty while a PuLP solve runs: its own (named) LP file is the model

    def model_path():
        return os.path.join(folder, MODEL_FILE)

    def patch_pulp(module):
        problem = getattr(module, "LpProblem", None)
        if problem is None or getattr(problem.solve, "_tcsexam", False):
            return
        original = problem.solve

        def solve(self, *args, **kwargs):
            try:
                self.writeLP(model_path())
            except Exception:  # noqa: BLE001 - evidence only: never change what the program does
                pass
            in_pulp.append(True)
            try:
                return original(self, *args, **kwargs)
            finally:
                in_pulp.pop()

        solve._tcsexam = True
        problem.solve = solve

    def wrap(cls, method, write):
        """Write the model (`write(self, path)`) just before `cls.method` runs, unless a PuLP solve
        is running (its backend's model is PuLP's, already written with its names)."""
        original = getattr(cls, method, None) if cls is not None else None
        if original is None or getattr(original, "_tcsexam", False):
            return

        def solve(self, *args, **kwargs):
            try:
                if not in_pulp:
                    write(self, model_path())
            except Exception:  # noqa: BLE001 - evidence only
                pass
            return original(self, *args, **kwargs)

        solve._tcsexam = True
        try:
            setattr(cls, method, solve)
        except (AttributeError, TypeError):
            pass

    def patch_highs(module):
        wrap(getattr(module, "Highs", None), "run", lambda model, path: model.writeModel(path))

    def patch_gurobi(module):
        wrap(getattr(module, "Model", None), "optimize", lambda model, path: model.write(path))

    def patch_copt(module):
        model = getattr(module, "Model", None)
        for method in ("solve", "solveLP"):
            wrap(model, method, lambda model, path: model.writeLp(path))

    patches = {"pulp.pulp": patch_pulp, "highspy": patch_highs, "gurobipy": patch_gurobi, "coptpy": patch_copt}

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name not in patches:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            loader = getattr(spec, "loader", None) if spec else None
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            run_module = loader.exec_module

            def exec_module(module):
                run_module(module)
                try:
                    patches[name](module)
                except Exception:  # noqa: BLE001 - evidence only
                    pass

            loader.exec_module = exec_module
            return spec

    sys.addaudithook(hook)
    sys.meta_path.insert(0, Finder())
    atexit.register(dump)


_FOLDER = os.environ.get(EVIDENCE_ENV)
if _FOLDER and os.path.isdir(_FOLDER):
    _install(_FOLDER)
