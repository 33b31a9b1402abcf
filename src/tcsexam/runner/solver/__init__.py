"""The Solver-attempt path: one candidate's job over a task's instances (`orchestrate`), the
context every run of it shares (`attempt`), one instance's run (`execute`), the candidate's
solver.yaml and build (`candidate`), a run's verdict (`verdict`), what a run keeps (`run_outputs`),
anytime answers (`anytime`), DRAT proofs of UNSAT answers (`drat`, its checker program
`drat_check`), and `tcsexam check` (`check_cli`: one certificate checked as a run checks it)."""
