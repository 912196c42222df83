"""Flows: the CLI, the build, answering, evaluation and serving."""

from flows.cli.interrupts import end_at_interrupt, runs_as_program

# First code of ours that `nkw` (or `python -m flows.cli.main`) runs: from here on a Ctrl-C during
# start-up is one line and exit 130, not a traceback from inside an import.
if runs_as_program():
    end_at_interrupt()
