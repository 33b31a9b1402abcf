"""What watches a Solver job without running anything: its heartbeat file (`heartbeat`, read by
`tcsexam status`) and the machine's speed calibration (`calibrate`, compared by `tcsexam compare`)."""
