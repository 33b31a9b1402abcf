"""Provenance of an evaluation: the manifest (manifest.py) and the CLI of `tcsexam manifest` and
`tcsexam compare` (cli.py)."""
