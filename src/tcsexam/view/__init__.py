"""`tcsexam view`: a static results explorer of one run (and of a comparison of two runs).

`collect` reads a finished (or partly finished) run directory into plain data, `site` writes the
folder (index.html, the app's JS and CSS, the data split per task into JS files loaded by
`<script>` tags so that the page works from file:// without a server), `report` renders the
leaderboard table and the construction and proof figures of the Snakemake report from the same data.
"""
