"""`tcsexam export`: a run's results for other tools (a per-instance table; the Every Eval Ever
schema). docs/export.md."""
