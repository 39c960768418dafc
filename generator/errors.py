"""The exception hierarchy the CLI maps to exit codes.

Library code raises; only `generator.cli` turns an exception into a message and an exit code:
0 success, 1 findings (a failed self-test, an untraceable claim, a stale output),
2 unusable input or usage (a malformed file, a missing dataset, a model that cannot load).
"""

from __future__ import annotations


class ReadoutError(Exception):
    """Base class: an error with a one-line, user-facing message."""

    exit_code = 2


class InputError(ReadoutError):
    """An input file, path or option is unusable. Exit code 2.

    The message should put the location first: ``file:line: field: what is wrong``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.path = path
        self.line = line
        self.field = field
        location = ""
        if path is not None:
            location = str(path)
            if line is not None:
                location += f":{line}"
            location += ": "
        if field is not None:
            location += f"{field}: "
        super().__init__(location + message)


class ModelUnavailableError(InputError):
    """A model could not be loaded offline. Exit code 2."""


class FindingsError(ReadoutError):
    """The command ran and found problems (failed checks, stale outputs). Exit code 1."""

    exit_code = 1
