"""Errors that the CLI turns into one clear line and an exit code."""


class InputError(Exception):
    """Bad input: a file, row or instance that is wrong. The CLI prints the message and exits 1.

    The message must name the file, row or instance and say what is wrong, on one line.
    """


class UsageError(Exception):
    """Wrong use of the command line (conflicting or missing options). Exit code 2."""
