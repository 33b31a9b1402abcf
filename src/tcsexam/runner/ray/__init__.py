"""A batch fanned out: the pools (`pool`: Ray actors, or this process for debugging) and their
contract (`contract`: what a pool runs and gets back), a job's own Ray (`job`), the Ray head a
local workflow run shares (`head`) and its command (`cli`: `tcsexam runner ray-head`)."""
