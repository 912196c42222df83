"""Stream the inputs as document references, and read one document back from its reference.

A build never holds the corpus in memory: `scan_inputs` yields one document at a time (the
caller keeps only its `DocumentRef`), and the task that ingests a document reads its text
again from the input file with `read_document`. A reference names a file, or a line of a
`documents.jsonl` file by its byte offset, plus the fingerprint the text must still have.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from schemas.ids import safe_doc_id
from tasks.ingest.ingest_documents import (
    IngestFailure,
    IngestResult,
    RawDocument,
    _claim_id,
    _expand,
    _owned_id,
    document_from_text,
    parse_jsonl_line,
)
from tasks.ingest.jsonl_lines import WHOLE_FILE, byte_lines, jsonl_lines
from tasks.ingest.read_formats import DECODED, file_text
from tasks.ingest.read_input import InputRefused, open_regular, read_bounded


class InputChanged(RuntimeError):
    """The input behind a reference no longer holds the document that was planned."""


@dataclass(frozen=True)
class DocumentRef:
    """What travels through flows and tasks instead of a document's text."""

    doc_id: str
    title: str
    source: str  # a file path, or `path#line=N` for one record of a JSONL file
    offset: int  # byte offset of that JSONL line; WHOLE_FILE otherwise
    fingerprint: str
    content_sha256: str
    owner_key: str
    n_chars: int

    @classmethod
    def of(cls, document: RawDocument, offset: int = WHOLE_FILE) -> "DocumentRef":
        return cls(
            document.doc_id,
            document.title,
            document.source,
            offset,
            document.fingerprint,
            document.content_sha256,
            document.owner_key,
            len(document.text),
        )

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "DocumentRef":
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Scanned:
    """One item of the input stream: a document (with its offset), a failure, or a notice."""

    document: RawDocument | None = None
    offset: int = WHOLE_FILE
    failure: IngestFailure | None = None
    notice: str | None = None


def scan_inputs(
    paths: Iterable[str | Path],
    *,
    max_chars: int,
    known_sources: dict[str, str] | None = None,
    known_content: dict[str, str] | None = None,
) -> Iterator[Scanned]:
    """Every input path as a stream of documents and failures, one file (or JSONL line) at a time.

    `known_sources` and `known_content` map the workspace's doc ids to their owner keys and
    content hashes: the same content under the same id is one document whatever its path."""
    expanded = IngestResult()
    files = _expand(paths, expanded)
    for failure in expanded.failures:
        yield Scanned(failure=failure)
    owners: dict[str, str] = dict(known_sources or {})
    contents: dict[str, str] = dict(known_content or {})
    claimed: set[str] = set()
    for path in files:
        for item in _scan_file(path, max_chars, _owned_id(path, owners)):
            if item.document is not None:
                notes = IngestResult()
                document = _claim_id(item.document, owners, contents, claimed, notes)
                yield from (Scanned(notice=notice) for notice in notes.notices)
                if document is None:  # a second copy of a document already in this run
                    continue
                item = dataclasses.replace(item, document=document)
            yield item


def _scan_file(path: Path, max_chars: int, owned_id: str) -> Iterator[Scanned]:
    """`owned_id`: the doc id this file has in the workspace, for failures of the whole file."""
    source = str(path)
    if path.suffix.lower() == ".jsonl":
        yield from _scan_jsonl(path, max_chars, owned_id)
        return
    try:
        data = read_bounded(path, max_chars)  # regular files only, at most what a document may hold
    except InputRefused as exc:
        yield Scanned(failure=IngestFailure(owned_id, source, str(exc)))
        return
    item = _whole_file_document(path, data, max_chars)
    if isinstance(item, str):
        yield Scanned(failure=IngestFailure(owned_id, source, item))
        return
    document, encoding = item
    if encoding not in DECODED:
        yield Scanned(notice=f"{source}: not UTF-8; decoded as {encoding}")
    if isinstance(document, RawDocument):
        yield Scanned(document=document)
    else:  # the whole file is no document: the document it used to be loses its input
        yield Scanned(failure=IngestFailure(owned_id, document.source, document.error))


def _whole_file_document(path: Path, data: bytes, max_chars: int):
    try:
        text, encoding, kind = file_text(path, data, max_chars)
    except InputRefused as exc:
        return str(exc)
    return document_from_text(
        text,
        doc_id=safe_doc_id(path.stem or "document"),
        source=str(path),
        kind=kind,
        encoding=encoding,
        max_chars=max_chars,
    ), encoding


def _scan_jsonl(path: Path, max_chars: int, owned_id: str) -> Iterator[Scanned]:
    source = str(path)
    try:
        handle = open_regular(path)  # a FIFO or a device is refused, never opened for reading
    except InputRefused as exc:
        yield Scanned(failure=IngestFailure(owned_id, source, str(exc)))
        return
    with handle:
        fallback = None
        for line in jsonl_lines(handle, max_chars):
            if line.problem is not None:
                failed_id = safe_doc_id(f"{path.stem}-line{line.number}")
                yield Scanned(failure=IngestFailure(failed_id, f"{source}#line={line.number}", line.problem))
                continue
            if line.encoding != "utf-8" and fallback is None:
                fallback = line.encoding
                yield Scanned(notice=f"{source}: not UTF-8; decoded as {line.encoding}")
            if not line.text or not line.text.strip():
                continue
            item = parse_jsonl_line(line.text, source, line.number, max_chars)
            yield (
                Scanned(document=item, offset=line.offset)
                if isinstance(item, RawDocument)
                else Scanned(failure=item)
            )


def read_document(ref: DocumentRef, max_chars: int) -> RawDocument:
    """The document behind `ref`, read again from its input; InputChanged if it is not the same."""
    path_text, _, line = ref.source.partition("#line=")
    path = Path(path_text)
    try:
        if line:
            item = _jsonl_record(path, int(line), ref.offset, max_chars)
        else:
            found = _whole_file_document(path, read_bounded(path, max_chars), max_chars)
            item = found if isinstance(found, str) else found[0]
    except (OSError, InputRefused) as exc:
        raise InputChanged(f"cannot read {ref.source}: {getattr(exc, 'strerror', None) or exc}") from None
    if isinstance(item, str) or isinstance(item, IngestFailure):
        raise InputChanged(f"{ref.source} no longer holds a document: {getattr(item, 'error', item)}")
    document = dataclasses.replace(item, doc_id=ref.doc_id)
    if document.fingerprint != ref.fingerprint:
        raise InputChanged(f"{ref.source} changed after the build was planned; build again")
    return document


def _jsonl_record(path: Path, number: int, offset: int, max_chars: int) -> RawDocument | IngestFailure | str:
    """Line `number` of a JSONL file: read at its byte offset, or found by number (UTF-16 files)."""
    with open_regular(path) as handle:
        if offset != WHOLE_FILE:
            handle.seek(offset)
            lines = byte_lines(handle, max_chars, number - 1, offset)
        else:
            lines = (found for found in jsonl_lines(handle, max_chars) if found.number == number)
        found = next(lines, None)
        lines.close()  # while the handle is open: the reader of a UTF-16 file lets go of it here
    if found is None:
        return f"line {number} is gone"
    if found.problem is not None or found.text is None:
        return found.problem or "unreadable"
    return parse_jsonl_line(found.text, str(path), number, max_chars)


def ingest_paths(
    paths: Iterable[str | Path],
    *,
    max_chars: int,
    known_sources: dict[str, str] | None = None,
    known_content: dict[str, str] | None = None,
) -> IngestResult:
    """Every input read into memory at once (small inputs and tests): the stream of `scan_inputs`
    collected into documents, failures and notices."""
    result = IngestResult()
    for item in scan_inputs(
        paths, max_chars=max_chars, known_sources=known_sources, known_content=known_content
    ):
        if item.notice:
            result.notices.append(item.notice)
        elif item.failure is not None:
            result.failures.append(item.failure)
        elif item.document is not None:
            result.documents.append(item.document)
    return result
