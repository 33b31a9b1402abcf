import errno

"""Errors that the CLI turns into one clear line and an exit code."""


class InputError(Exception):
    """Bad input: a file, row or instance that is wrong. The CLI prints the message and exits 1.

    The message must name the file, row or instance and say what is wrong, on one line.
    """

    exit_code = 1  #: the CLI's exit status (a subclass may say another)


class MisspeltKeyError(InputError):
    """A key nobody knows in a file the operator hands over (a candidate's `solver.yaml`): a typo,
    not a submission that fails. One line with the nearest known key; the CLI exits 2."""

    exit_code = 2


class UsageError(Exception):
    """Wrong use of the command line (conflicting or missing options). Exit code 2."""


def os_error_text(exc: OSError, path: object = None) -> str:
    """One line for a failed file operation: the path, the system's reason, and what it means for
    the two a user can fix at once (a full disk, a read-only file system)."""
    where = path if path is not None else (exc.filename or "")
    reason = exc.strerror or str(exc)
    hint = {
        errno.ENOSPC: " (the file system holding it is full: free space or choose another folder)",
        errno.EDQUOT: " (disk quota exceeded: free space or choose another folder)",
        errno.EROFS: " (the file system holding it is read-only: choose a writable folder)",
        errno.EACCES: " (permission denied: choose a folder you can write)",
    }.get(exc.errno or 0, "")
    return f"{where}: {reason}{hint}" if where else f"{reason}{hint}"
