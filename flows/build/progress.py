"""Progress of a build on stderr: on a terminal, a bar of documents with ETA and a bar per document
in flight (its stages); elsewhere a line per finished document; failures, lost items and warnings
always get a line of their own.

A document built in a worker process reports its stages there (workers share the terminal's
stderr): a worker prints only the lines that must stay, never a bar. The document bar and lines
come from the process that started the build, which counts them."""

from __future__ import annotations

import threading
from typing import Any, TextIO

from flows.build.runner import DocumentReport, StageOutcome
from flows.runtime import Meter


class Progress:
    """A build's progress, fed one stage outcome at a time and one finished document at a time."""

    def __init__(
        self,
        total_documents: int,
        stream: TextIO | None = None,
        quiet: bool = False,
        stages: int = 0,
        console: Any = None,
    ) -> None:
        self.total = total_documents
        self.stages = stages
        self.quiet = quiet
        self.finished = 0
        # A worker's Progress (no documents of its own to count) never draws a bar.
        plain = total_documents == 0 and console is None
        if plain and not quiet:
            from rich.console import Console

            console = Console(file=stream, force_terminal=False)
        self.meter = Meter("documents", total_documents, quiet=quiet, stream=stream, console=console)
        self._stages_done: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, doc_id: str, outcome: StageOutcome) -> None:
        if self.quiet:
            return
        with self._lock:
            done = self._stages_done[doc_id] = self._stages_done.get(doc_id, 0) + 1
        if outcome.status in ("failed", "partial"):
            detail = outcome.error or ", ".join(
                f"{table} {n}" for table, n in outcome.rows.items() if table not in ("failures", "llm_calls")
            )
            self.meter.log(f"  {doc_id} {outcome.stage} {outcome.status} {outcome.seconds:.1f}s: {detail}")
        for warning in outcome.warnings:
            self.meter.log(f"  {doc_id} warning: {warning}")
        total = max(self.stages, done)
        self.meter.row(doc_id, f"  {doc_id[:32]} {outcome.stage}", done, total)

    def document_done(self, report: DocumentReport) -> None:
        if self.quiet:
            return
        with self._lock:
            self.finished += 1
        partial = any(o.status == "partial" for o in report.outcomes)
        status = (
            "FAILED (see failures)" if report.failed else "PARTIAL (LLM items lost)" if partial else "done"
        )
        self.meter.drop_row(report.doc_id)
        self.meter.advance(1, f"{report.doc_id} {status}")

    def close(self) -> None:
        self.meter.close()
