"""The `readout` command line: it parses the arguments and dispatches to the command's own module
(generator.commands.evaluation, ledger, reports, gate, regression and scaffold, and
generator.render.export), imported only when that command is chosen. The commands are the only
layer that prints and picks exit codes.

Every command body does the same four things: load its input (usually the project), make one
library call, format what came back, and return an exit code: 0 success, 1 findings (read from
the returned result: an untraceable claim, a stale output, a failed self-test, an invalid
sandbox run), 2 usage or input error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Library
code raises; `main` maps every exception through `exit_code_for`, the one map, and prints it as one
line (the traceback only with `--debug` or `READOUT_DEBUG=1`). SIGTERM raises `Terminated`, a
KeyboardInterrupt, so `kill` unwinds a command exactly as Ctrl-C does: every temporary removed,
every lock released, one line.

A command that writes a project's outputs (`evaluate`, `build`, `render`, `sandbox`) holds that
directory's write lock while it runs (generator.storage.locks); a second one stops at once with exit 2.
`check` and `render --check` write no output and take no lock.

Each command imports only what it runs: its modules are imported inside its own functions, and
only the chosen command's options are configured, so `check` starts without the renderer, Jinja
or NumPy, `render` without the evaluation stage, and nothing but `evaluate`, `cost` and `build`
loads torch (tests/test_architecture.py holds each command to its import set).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NoReturn, Sequence, TextIO

from generator import __version__
from generator.core.dataclass import save_compiled_methods
from generator.storage.errors import ReadoutError
from generator.storage.paths import LINK_LOOP, display_path, path_option

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
# 128 + SIGTERM, what a shell reports for a process the signal ended.
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where SIGINT raises KeyboardInterrupt: every `except BaseException` that
    removes a temporary, every lock's release and subprocess's own handling of an interrupt then
    run for `kill` exactly as for Ctrl-C, where the default action would end the process on the
    spot, temporaries and all."""


# The one exception-to-exit-code map, most specific first. Findings are never exceptions: a
# command reads them from the result it got back.
EXCEPTION_EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (Terminated, EXIT_TERMINATED),
    (KeyboardInterrupt, EXIT_INTERRUPTED),
    (ReadoutError, EXIT_USAGE),
    (Exception, EXIT_USAGE),
)


def exit_code_for(error: BaseException) -> int:
    for kind, code in EXCEPTION_EXIT_CODES:
        if isinstance(error, kind):
            return code
    raise error


ERROR_LINE_MAX = 300


def error_line(error: BaseException) -> str:
    """One line of at most ERROR_LINE_MAX characters for any exception: the library's own message,
    or, for anything unexpected, the file it came from and what (a value echoed from a hostile
    input is cut, never the whole line it came in)."""
    if isinstance(error, Terminated):
        return "Terminated."
    if isinstance(error, KeyboardInterrupt):
        return "Interrupted."
    if isinstance(error, ReadoutError):
        return _one_line(f"Error: {error}")
    where = getattr(error, "readout_path", None)
    detail = " ".join(str(error).split())[:120] or "no message"
    if isinstance(error, RecursionError):
        detail = "input nested too deeply"
    elif isinstance(error, MemoryError):
        detail = "input too large to hold in memory"
    elif isinstance(error, UnicodeDecodeError):
        detail = f"not UTF-8 text (byte {error.start})"
    elif isinstance(error, OSError) and error.strerror:
        detail = f"{error.strerror}{': ' + str(error.filename)[:100] if error.filename else ''}"
    prefix = f"{where}: " if where else ""
    loop = re.match(r"Symlink loop from '(.*)'\Z", str(error)) if isinstance(error, RuntimeError) else None
    if loop:   # Path.resolve on Python 3.11 reports a link cycle this way
        return _one_line(f"Error: {display_path(loop.group(1))}: {LINK_LOOP}")
    hint = " (run with --debug or READOUT_DEBUG=1 for the traceback)"
    if isinstance(error, OSError):   # a permission or a full disk is the user's to fix, not a bug
        return _one_line(f"Error: {prefix}{detail}")
    return _one_line(f"Error: {prefix}internal error: {type(error).__name__}: {detail}", hint)


def _one_line(text: str, tail: str = "") -> str:
    text = " ".join(text.split())
    room = ERROR_LINE_MAX - len(tail)
    return (text if len(text) <= room else text[:room - 3] + "...") + tail


def print_lines(lines: Sequence[str], stream: TextIO) -> None:
    for line in lines:
        print(line, file=stream)


def project_argument(parser: argparse.ArgumentParser, help_text: str, default: Path = Path(".")) -> None:
    parser.add_argument("project", nargs="?", default=default, type=path_option, help=help_text)


# --- registry --------------------------------------------------------------------------------

Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]


def _elsewhere(module: str, function: str) -> Callable:
    """A command function that lives in another module, imported only when the command is chosen."""
    def call(argument):   # type: ignore[no-untyped-def]
        return getattr(importlib.import_module(module), function)(argument)
    call.__qualname__ = f"{module}.{function}"
    return call


def _command(name: str, summary: str, module: str) -> Command:
    """A command whose `configure_NAME` and `run_NAME` live in `module` (NAME with `_` for `-`),
    imported only when the command is chosen."""
    function = name.replace("-", "_")
    return name, summary, _elsewhere(module, f"configure_{function}"), _elsewhere(module, f"run_{function}")


COMMANDS: tuple[Command, ...] = tuple(_command(*command) for command in (
    ("init", "scaffold a new review project: readout.yaml, design/, claims/, outputs/", "generator.commands.scaffold"),
    ("selftest", "check the scorer against hand-computed fixtures", "generator.commands.evaluation"),
    ("evaluate", "run the four-row benchmark and write results.json", "generator.commands.evaluation"),
    ("freeze", "record the hashes of the design documents", "generator.commands.ledger"),
    ("check", "prove every ledger claim against design documents and results", "generator.commands.ledger"),
    ("import-draft", "turn a Markdown draft into unsourced ledger claims", "generator.commands.ledger"),
    ("upgrade-ledger", "convert a ledger written before frames into frames the package writes",
     "generator.commands.ledger"),
    ("render", "render readout.html, TEACHBACK.md and AAR.md from the checked ledger", "generator.commands.reports"),
    ("build", "evaluate if inputs changed, then check, then render", "generator.commands.reports"),
    ("gate", "what CI runs: fetch a shallow clone's history, check, then render --check", "generator.commands.gate"),
    ("regress", "a regression gate against the last release that tells noise from a loss",
     "generator.commands.regression"),
    ("sandbox", "run the offline L03 teaching sandbox", "generator.commands.reports"),
    ("ceiling", "compute the oracle reranking ceiling", "generator.commands.reports"),
    ("cost", "measure a reranker's CPU cost by its shape (random weights, real pairs)", "generator.commands.evaluation"),
    ("train-reranker", "fine-tune a cross-encoder on the corpus alone (titles and texts, no queries)",
     "generator.commands.evaluation"),
    ("export", "export a report's rows table as CSV or a LaTeX booktabs table", "generator.render.export"),
))


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line like every other error (and the same exit 2)."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(EXIT_USAGE, _one_line(f"Error: {self.prog}: {message} (see {self.prog} --help)") + "\n")


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `chosen`, only that command's options are configured (the
    others' configuration imports modules the chosen command does not run)."""
    parser = _Parser(
        prog="readout",
        description="Decide, with evidence anyone can audit, whether a cross-encoder reranker earns "
                    "its CPU cost.",
        epilog="Exit codes: 0 success, 1 findings (failed check, untraceable claim, stale output), "
               "2 usage or input error (or the outputs being written by another readout process), "
               "130 interrupted, 143 terminated.")
    parser.add_argument("--version", action="version", version=f"readout {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an unexpected error, print the traceback too (or set READOUT_DEBUG=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, summary, configure, run in COMMANDS:
        sub = subparsers.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        if chosen is None or name == chosen:
            configure(sub)
        sub.set_defaults(run=run)
    return parser


def _debugging(args: argparse.Namespace | None) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("READOUT_DEBUG", "").strip() not in ("", "0")


def _command_in(argv: Sequence[str]) -> str | None:
    """The command word of a command line: the first word that is not a global option."""
    return next((word for word in argv if not word.startswith("-")), None)


def _raise_terminated(signum: int, frame: object) -> NoReturn:
    raise Terminated


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated within the block. Only where it would otherwise end the process
    on the spot (SIG_DFL): a handler or an ignore someone else set is theirs, and a thread other
    than the main one cannot set a handler at all."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous is not signal.SIG_DFL:
            previous = None
        else:
            signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    with _sigterm_raises():
        # Parsing too: building a command's parser imports its option defaults, and an interrupt
        # there is as much an interrupt as one in the command itself.
        try:
            args = build_parser(_command_in(argv)).parse_args(argv)
            return args.run(args)
        except BaseException as error:  # noqa: BLE001 - the one place every exception becomes an exit code
            if isinstance(error, SystemExit):
                raise
            code = exit_code_for(error)
            if _debugging(args) and not isinstance(error, (ReadoutError, KeyboardInterrupt)):
                traceback.print_exc(file=sys.stderr)
            print(error_line(error), file=sys.stderr)
            return code


def _interrupt_ends_the_process() -> None:
    """From here on a Ctrl-C ends the process at once and quietly, as a shell expects (it reads
    130): the work is over, and an interrupt must not become a traceback in the last lines."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:
        pass


def run() -> NoReturn:
    """The `readout` command: `main`, then out of the process at once. A gate command's work is
    done when `main` returns (every file it writes is renamed into place by then), and tearing
    down two hundred imported modules costs a tenth of a `check`; after the model stack was loaded
    (torch keeps its own exit handlers) the interpreter exits the usual way."""
    try:
        code = main()
        _interrupt_ends_the_process()
    except KeyboardInterrupt as error:
        # One that landed outside main's own handler: as main returned, or a second Ctrl-C while
        # main reported the first.
        _interrupt_ends_the_process()
        code = exit_code_for(error)
        try:
            print(error_line(error), file=sys.stderr)
        except (OSError, ValueError):
            pass
    if any(name in sys.modules for name in ("torch", "sentence_transformers")):
        sys.exit(code)
    save_compiled_methods()   # os._exit runs no exit handler
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a reader that went away (`readout check | head`)
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
