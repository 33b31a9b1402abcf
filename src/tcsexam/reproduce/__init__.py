"""Reproducing an evaluation: the run's manifest (manifest.py), `tcsexam compare` of two runs
(compare.py: the verdict; compare_run.py: reading a run; compare_inputs.py: what differs in the
inputs; compare_speed.py: machine speed; compare_report.py: the report), and the CLI of
`tcsexam manifest` and `tcsexam compare` (cli.py)."""
