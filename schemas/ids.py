"""Deterministic content-hash ids: a rebuild of unchanged input gives identical ids."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")
MAX_DOC_ID_LEN = 80
# json.dumps with these options builds a new encoder per call; ids are hashed tens of thousands of
# times per document, so one encoder serves them all (the same JSON text).
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def stable_hash(*parts: object, length: int = 16) -> str:
    """Hex sha256 over the JSON encoding of `parts` (order matters), cut to `length`."""
    return hashlib.sha256(_CANONICAL.encode(parts).encode("utf-8")).hexdigest()[:length]


def make_id(prefix: str, *parts: object) -> str:
    """`<prefix>_` + 16 hex of sha256 over the namespace and the canonical fields."""
    return f"{prefix}_{stable_hash(prefix, *parts)}"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def safe_doc_id(raw: str) -> str:
    """A file-name-safe document id derived from `raw` (no path separators, dots or spaces).

    Ids that had to be changed get a short hash suffix of the original so two different raw
    ids can never collapse to the same safe id.
    """
    text = unicodedata.normalize("NFKC", str(raw)).strip()
    cleaned = _SAFE_ID.sub("-", text).strip("-_")
    if cleaned == text and cleaned and len(cleaned) <= MAX_DOC_ID_LEN:
        return cleaned
    base = cleaned[: MAX_DOC_ID_LEN - 9] or "doc"
    return f"{base}-{stable_hash('doc_id', text, length=8)}"
