"""The errors library code raises. Only `generator.commands.cli` turns them into messages and exit codes.

Exit codes (the CLI's one map, `generator.commands.cli.exit_code_for`):
0 success; 1 findings, which a command reads from the result it got back (an untraceable claim,
a stale output, a failed self-test, an invalid sandbox run), never from an exception;
2 unusable input or usage: every `ReadoutError`, and any unexpected exception, reported as one
line (the traceback only with `--debug` or `READOUT_DEBUG=1`).
"""

from __future__ import annotations

from typing import Any

# How much of an id or a value an error message repeats: a line an author can read, never a
# 50 MB echo of the input.
MAX_ECHO_CHARS = 80


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """`text` cut to `limit` characters with an ellipsis, for a message that repeats it."""
    return text if len(text) <= limit else text[:limit] + "..."


def excerpt(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """`value` as an error message quotes it: its repr, cut to `limit` characters with an ellipsis
    and the full length, so no input, however long, makes the message longer than a line."""
    try:
        text = value if isinstance(value, str) else str(value)
    except ValueError:      # an integer beyond Python's 4,300-digit conversion limit
        text = f"<an integer of {value.bit_length():,} bits>"
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"



class ReadoutError(Exception):
    """Base class: an error with a one-line, user-facing message."""


class InputError(ReadoutError):
    """An input file, path or option is unusable.

    The message puts the location first: ``file:line: field: what is wrong``.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
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
    """A model could not be resolved or loaded (offline, not cached, not a model directory)."""
