"""Progress lines of a build on stderr: one per stage outcome, one per finished document.

A document built in a worker process prints its stage lines there (workers share the terminal's
stderr); the document lines come from the process that started the build, which counts them."""

from __future__ import annotations

import sys
import threading

from flows.build.runner import DocumentReport, StageOutcome


class Progress:
    """One line per stage outcome on stderr, safe across threads."""

    def __init__(self, total_documents: int, stream=None, quiet: bool = False) -> None:
        self.total = total_documents
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.finished = 0
        self._lock = threading.Lock()

    def __call__(self, doc_id: str, outcome: StageOutcome) -> None:
        if self.quiet or outcome.status == "skipped":
            return
        with self._lock:
            rows = ", ".join(
                f"{table} {n}" for table, n in outcome.rows.items() if table not in ("failures", "llm_calls")
            )
            detail = outcome.error if outcome.error else rows
            print(
                f"  {doc_id[:36]:<36} {outcome.stage:<24} {outcome.status:<7} "
                f"{outcome.seconds:6.1f}s  {detail}",
                file=self.stream,
                flush=True,
            )
            for warning in outcome.warnings:
                print(f"  {doc_id[:36]:<36} warning: {warning}", file=self.stream, flush=True)

    def document_done(self, report: DocumentReport) -> None:
        if self.quiet:
            return
        with self._lock:
            self.finished += 1
            partial = any(o.status == "partial" for o in report.outcomes)
            status = (
                "FAILED (see failures)"
                if report.failed
                else "PARTIAL (LLM items lost)"
                if partial
                else "done"
            )
            print(f"[{self.finished}/{self.total}] {report.doc_id} {status}", file=self.stream, flush=True)
