"""Log records as one line: the exception's type and text instead of its traceback.

The terminal of a command gets one line per problem (the project's rule); a traceback is for
`--debug`. Libraries log exceptions with their tracebacks (asyncio on a failed accept, Prefect
on a failed task run), so their handlers get this filter."""

from __future__ import annotations

import logging
from typing import Iterable


class OneLine(logging.Filter):
    """Fold a record's exception into its message and drop the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            exc = record.exc_info[1]
            text = " ".join(str(exc).split())[:300]
            message = record.getMessage()
            record.msg = f"{message}: {type(exc).__name__}: {text}" if exc else message
            record.args = None
            record.exc_info = None
            record.exc_text = None
        record.stack_info = None
        return True


def add_one_line(targets: Iterable[logging.Logger | logging.Handler]) -> None:
    """Install `OneLine` on loggers or handlers, once each."""
    for target in targets:
        if not any(isinstance(f, OneLine) for f in target.filters):
            target.addFilter(OneLine())


def one_line_handlers(prefix: str) -> None:
    """`OneLine` on every handler of the loggers named `prefix` or `prefix.*` (a logger's own filters
    do not see records of its children; its handlers do)."""
    names = [n for n in list(logging.root.manager.loggerDict) if n == prefix or n.startswith(prefix + ".")]
    for name in names:
        logger = logging.getLogger(name)
        add_one_line(logger.handlers)
