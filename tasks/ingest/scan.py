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

from tasks.ingest.ingest_documents import (
    IngestFailure,
    IngestResult,
    RawDocument,
    _claim_id,
    _owned_id,
    _expand,
    decode_bytes,
    document_from_text,
    parse_jsonl,
    parse_jsonl_line,
)
from schemas.ids import safe_doc_id
from tasks.ingest.read_input import InputRefused, read_bounded

WHOLE_FILE = -1  # offset of a reference that is a whole file (or a line of a file read whole)


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
        yield from _scan_jsonl(path, max_chars)
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
    if encoding != "utf-8":
        yield Scanned(notice=f"{source}: not UTF-8; decoded as {encoding}")
    if isinstance(document, RawDocument):
        yield Scanned(document=document)
    else:  # the whole file is no document: the document it used to be loses its input
        yield Scanned(failure=IngestFailure(owned_id, document.source, document.error))


def _whole_file_document(path: Path, data: bytes, max_chars: int):
    text, encoding, problem = decode_bytes(data)
    if text is None:
        return problem or "undecodable"
    kind = "screenplay" if path.suffix.lower() == ".fountain" else None
    return document_from_text(
        text,
        doc_id=safe_doc_id(path.stem or "document"),
        source=str(path),
        kind=kind,
        encoding=encoding,
        max_chars=max_chars,
    ), encoding


def _scan_jsonl(path: Path, max_chars: int) -> Iterator[Scanned]:
    source = str(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        yield Scanned(
            failure=IngestFailure(
                safe_doc_id(path.stem or "input"), source, f"cannot read: {exc.strerror or exc}"
            )
        )
        return
    with handle:
        head = handle.read(8192)
        handle.seek(0)
        if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
            yield from _scan_jsonl_whole(path, handle.read(), max_chars)  # UTF-16 or binary: the old way
            return
        offset, number, fallback = 0, 0, None
        for line in handle:
            number += 1
            start, offset = offset, offset + len(line)
            text, encoding = _decode_line(line, first=start == 0)
            if encoding != "utf-8" and fallback is None:
                fallback = encoding
                yield Scanned(notice=f"{source}: not UTF-8; decoded as {encoding}")
            if text is None or not text.strip():
                continue
            item = parse_jsonl_line(text, source, number, max_chars)
            yield (
                Scanned(document=item, offset=start)
                if isinstance(item, RawDocument)
                else Scanned(failure=item)
            )


def _scan_jsonl_whole(path: Path, data: bytes, max_chars: int) -> Iterator[Scanned]:
    text, encoding, problem = decode_bytes(data)
    if text is None:
        yield Scanned(
            failure=IngestFailure(safe_doc_id(path.stem or "input"), str(path), problem or "undecodable")
        )
        return
    if encoding != "utf-8":
        yield Scanned(notice=f"{path}: not UTF-8; decoded as {encoding}")
    for item in parse_jsonl(text, str(path), max_chars):
        yield Scanned(document=item) if isinstance(item, RawDocument) else Scanned(failure=item)


def _decode_line(line: bytes, first: bool) -> tuple[str | None, str]:
    try:
        return line.decode("utf-8-sig" if first else "utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding, _ = decode_bytes(line)
        return text, encoding


def read_document(ref: DocumentRef, max_chars: int) -> RawDocument:
    """The document behind `ref`, read again from its input; InputChanged if it is not the same."""
    path_text, _, line = ref.source.partition("#line=")
    path = Path(path_text)
    try:
        if line and ref.offset != WHOLE_FILE:
            with path.open("rb") as handle:
                handle.seek(ref.offset)
                text, _ = _decode_line(handle.readline(), first=ref.offset == 0)
            item = parse_jsonl_line(text or "", path_text, int(line), max_chars)
        elif line:
            item = _whole_jsonl_line(path, int(line), max_chars)
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


def _whole_jsonl_line(path: Path, number: int, max_chars: int) -> RawDocument | IngestFailure | str:
    text, _, problem = decode_bytes(path.read_bytes())
    if text is None:
        return problem or "undecodable"
    lines = text.splitlines()
    if number > len(lines):
        return f"line {number} is gone"
    return parse_jsonl_line(lines[number - 1], str(path), number, max_chars)


def ingest_paths(
    paths: Iterable[str | Path], *, max_chars: int, known_sources: dict[str, str] | None = None,
    known_content: dict[str, str] | None = None,
) -> IngestResult:
    """Every input read into memory at once (small inputs and tests): the stream of `scan_inputs`
    collected into documents, failures and notices."""
    result = IngestResult()
    for item in scan_inputs(paths, max_chars=max_chars, known_sources=known_sources,
                            known_content=known_content):
        if item.notice:
            result.notices.append(item.notice)
        elif item.failure is not None:
            result.failures.append(item.failure)
        elif item.document is not None:
            result.documents.append(item.document)
    return result
