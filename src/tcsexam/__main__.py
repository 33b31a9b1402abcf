from tcsexam.cli import run_command

run_command()
