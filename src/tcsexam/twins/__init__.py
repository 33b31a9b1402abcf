"""Memorisation caught (docs/twins.md): instance twins with exactly carried-over references
(`make`), the paired original - twin difference of the relative score (`tcsexam.scoring.twins`), and the scan
of a candidate's files for hard-coded answers (`scan`)."""
