"""Campaign planning: what a workflow run costs on a cluster before it starts (`tcsexam plan`)."""
