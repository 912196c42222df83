"""Turn input files into documents: plain text, Markdown, screenplays (Fountain, Final Draft, PDF;
see tasks/ingest/read_formats.py) and the benchmark `documents.jsonl` format (one JSON document per
line).

Bad input never raises: it becomes an `IngestFailure` with a one-line reason.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from schemas.ids import safe_doc_id, stable_hash
from tasks.ingest.read_input import path_problem
from tasks.ingest.segment_sections import detect_kind
from tasks.stage import RawDocument, StageContext, StageOutput
from tasks.tables.lock import LOCK_NAME
from tasks.tables.partitions import LISTING_NAME
from tasks.text import detect_language, normalize_text

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".fountain", ".spmd", ".text", ".jsonl", ".fdx", ".pdf", ""}
UNSUPPORTED = (
    "not a kind of document nkw reads ({suffix}); inputs are text (.txt, .md), screenplays "
    "(.fountain, .fdx, .pdf with a text layer) and documents.jsonl"
)


@dataclass(frozen=True)
class IngestFailure:
    doc_id: str
    source: str
    error: str


@dataclass
class IngestResult:
    documents: list[RawDocument] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def decode_bytes(data: bytes) -> tuple[str | None, str, str | None]:
    """(text, encoding, problem): UTF-8 first, then UTF-16 with a BOM, GB18030, cp1252."""
    sample = data[:8192]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16", None
        except UnicodeDecodeError:
            return None, "", "undecodable UTF-16 text"
    if b"\x00" in sample:
        return None, "", "binary file (contains NUL bytes), not text"
    try:
        return data.decode("utf-8-sig"), "utf-8", None
    except UnicodeDecodeError:
        pass
    for encoding in ("gb18030", "cp1252"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "gb18030" and not re.search(r"[\u4e00-\u9fff]", text):
            continue  # bytes that happen to be valid GB18030 but are not Chinese
        return text, encoding, None
    return None, "", "not UTF-8 and no fallback encoding fits"


def _control_ratio(text: str) -> float:
    sample = text[:8192]
    if not sample:
        return 0.0
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\n\r\t\f")
    return controls / len(sample)


def _title_from_text(text: str, fallback: str) -> str:
    fountain = re.search(r"(?im)^title:\s*(.+)$", text[:2000])
    if fountain:
        return fountain.group(1).strip().strip("_*")
    heading = re.search(r"(?m)^#\s+(.+)$", text[:2000])
    if heading:
        return heading.group(1).strip()
    return fallback.replace("_", " ").replace("-", " ").strip().title() or "Untitled"


def document_from_text(
    text: str,
    *,
    doc_id: str,
    source: str,
    title: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    encoding: str = "utf-8",
    meta: dict[str, Any] | None = None,
    max_chars: int,
) -> RawDocument | IngestFailure:
    """Validate decoded text and describe it as a document, or say why it cannot be one."""
    text = normalize_text(text)
    if not text.strip():
        return IngestFailure(doc_id, source, "empty document (no text)")
    if _control_ratio(text) > 0.05:
        return IngestFailure(doc_id, source, "binary or corrupted file (too many control characters)")
    if len(text) > max_chars:
        return IngestFailure(
            doc_id,
            source,
            f"document too large: {len(text):,} characters > limit {max_chars:,} (build.max_document_chars)",
        )
    language = language if language in ("en", "zh") else detect_language(text)
    kind = kind if kind in ("screenplay", "prose") else detect_kind(text, language, source)
    return RawDocument(
        doc_id=doc_id,
        title=title or _title_from_text(text, doc_id),
        text=text,
        language=language,
        kind=kind,
        source=source,
        encoding=encoding,
        meta=dict(meta or {}),
    )


def parse_jsonl(data: str, source: str, max_chars: int) -> Iterable[RawDocument | IngestFailure]:
    """Documents of the shared benchmark format, one per line; a bad line is one failure.

    Lines end at a line feed only (see tasks.ingest.jsonl_lines): U+2028 may sit inside a record."""
    for number, line in enumerate(data.split("\n"), start=1):
        if line.strip():
            yield parse_jsonl_line(line, source, number, max_chars)


def parse_jsonl_line(line: str, source: str, number: int, max_chars: int) -> RawDocument | IngestFailure:
    """One line of a documents.jsonl file as a document, or why it cannot be one."""
    where = f"{source}#line={number}"
    failed_id = safe_doc_id(f"{Path(source).stem}-line{number}")
    problem = None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        problem = exc.msg
    except RecursionError:
        problem = "nested too deeply"
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        problem = str(exc).split(":")[0]
    if problem is not None:
        return IngestFailure(failed_id, where, f"invalid JSON on line {number}: {problem}")
    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
        return IngestFailure(failed_id, where, f"line {number} has no 'text' string")
    raw_id = _text_field(record, "doc_id") or _text_field(record, "id") or f"{Path(source).stem}-{number}"
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    meta = dict(meta, raw_doc_id=raw_id)
    if record.get("source"):
        meta["source"] = str(record["source"])
    return document_from_text(
        record["text"],
        doc_id=safe_doc_id(raw_id),
        source=where,
        title=_text_field(record, "title") or None,
        language=record.get("language"),
        kind=record.get("kind"),
        meta=meta,
        max_chars=max_chars,
    )


def _text_field(record: dict, key: str) -> str:
    """A field that must be text: strings and numbers as text, anything else (lists, objects) as absent."""
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return str(value).strip()


def _owned_id(path: Path, owners: dict[str, str]) -> str:
    """The doc id this file already owns in the workspace, else one from its name."""
    owned = [doc_id for doc_id, owner in owners.items() if owner == str(path)]
    return owned[0] if owned else safe_doc_id(path.stem or "input")


def _claim_id(
    document: RawDocument,
    owners: dict[str, str],
    contents: dict[str, str],
    claimed: set[str],
    result: IngestResult,
) -> RawDocument | None:
    """Keep the natural id unless another input already owns it; then add a source hash.

    The same content under the same id is one document, whatever path it came from: a second
    copy in this run is skipped with a notice, and a moved file keeps its document."""
    doc_id = document.doc_id
    same_content = contents.get(doc_id) == document.content_sha256
    if doc_id in claimed and same_content:
        result.notices.append(
            f"{document.source}: same content as {owners.get(doc_id, doc_id)}; one document ({doc_id})"
        )
        return None
    if same_content and owners.get(doc_id, document.owner_key) != document.owner_key:
        result.notices.append(f"{document.source}: same content as {owners[doc_id]}; one document ({doc_id})")
    taken = owners.get(doc_id, document.owner_key) != document.owner_key or doc_id in claimed
    if not same_content and taken:
        doc_id = f"{doc_id}-{stable_hash('source', document.source, length=8)}"
        document = RawDocument(**{**document.__dict__, "doc_id": doc_id})
        if doc_id in claimed:
            return None
    owners[doc_id] = document.owner_key
    contents[doc_id] = document.content_sha256
    claimed.add(doc_id)
    return document


def _is_document_file(path: Path) -> bool:
    """Files a folder walk reads: documents, but not question files, READMEs or hidden files."""
    return path.suffix.lower() in TEXT_SUFFIXES and not _is_left_alone(path)


def _is_left_alone(path: Path) -> bool:
    """Files of an input folder that are no document and need no mention (notes for people, questions)."""
    name = path.name.lower()
    return name.startswith(".") or name.startswith("readme") or name.endswith("questions.jsonl")


def _expand(paths: Iterable[str | Path], result: IngestResult) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        problem = path_problem(path)
        if problem is not None:
            result.failures.append(IngestFailure(safe_doc_id(path.stem or "input"), str(path), problem))
            continue
        path = path.resolve()
        if path.is_dir():
            # Regular files only; other entries named like documents (FIFOs, devices) are reported.
            walked = sorted(p for p in _walk(path) if not _is_left_alone(p))
            entries = [p for p in walked if _is_document_file(p)]
            # Anything else is listed with its reason: a folder never loses a file without a word.
            for other in (p for p in walked if not _is_document_file(p)):
                reason = UNSUPPORTED.format(suffix=other.suffix.lower() or "no suffix")
                result.failures.append(IngestFailure(safe_doc_id(other.stem or "input"), str(other), reason))
            # A link in a folder could pull in any file of the machine: listed, never followed.
            for link in (p for p in entries if p.is_symlink()):
                reason = (
                    f"symbolic link (to {os.readlink(link)}) in an input folder: not followed; "
                    "name the file itself to build it"
                )
                result.failures.append(IngestFailure(safe_doc_id(link.stem or "input"), str(link), reason))
            entries = [p for p in entries if not p.is_symlink()]
            found = [p.resolve() for p in entries if p.is_file()]
            for odd in (p for p in entries if not p.is_file()):
                reason = path_problem(odd) or "not a regular file; only regular files are read"
                result.failures.append(IngestFailure(safe_doc_id(odd.stem or "input"), str(odd), reason))
            if not entries:
                result.failures.append(
                    IngestFailure(safe_doc_id(path.name or "folder"), str(path), "folder has no text files")
                )
            files.extend(p for p in found if p not in files)
        elif path not in files:
            files.append(path)
    return files


# What `nkw` writes in a workspace (tables, manifests, caches, run logs, ablation variants): never
# an input, even when the workspace sits inside the folder being built (or is that folder).
WORKSPACE_FOLDERS = {"tables", "manifest", "cache", "runs", "variants"}
WORKSPACE_FILES = {LOCK_NAME, LISTING_NAME}


def is_workspace(folder: Path) -> bool:
    return (folder / "tables").is_dir() and (folder / "manifest").is_dir()


def _walk(folder: Path) -> Iterable[Path]:
    """Every file under `folder`, links to folders not followed, workspaces' own folders left out."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(dirpath)
        if is_workspace(here) or LOCK_NAME in filenames:  # a workspace, or one being made by this build
            dirnames[:] = [d for d in dirnames if d not in WORKSPACE_FOLDERS]
            filenames = [name for name in filenames if name not in WORKSPACE_FILES]
        yield from (here / name for name in filenames)


def run(ctx: StageContext) -> StageOutput:
    if ctx.raw is None:
        raise RuntimeError("ingest_documents runs on a raw document")
    return {"documents": [ctx.raw.to_row()]}
