"""Construction problems: finite objects (a cap set, a Golomb ruler, a Ramsey colouring, ...)
checked exactly, one module per kind, registered in `tcsexam.problems.PROBLEMS` beside the Solver
problems and passing the same conformance suite.

A construction task's single instance is its parameter file (the task file itself, whose
`parameters:` mapping the checker reads); the certificate is the object. The reward is the
construction track's original task reward (`_base.reward`). Formats: docs/constructions.md.
`checker_id` names the checker in every verdict; `cli` holds `tcsexam construction run|row`.
"""

from tcsexam.problems.constructions._base import checker_id

__all__ = ["checker_id"]
