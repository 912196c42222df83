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
_json_string = json.encoder.encode_basestring  # how that encoder writes a string


def stable_hash(*parts: object, length: int = 16) -> str:
    """Hex sha256 over the JSON encoding of `parts` (order matters), cut to `length`."""
    return hashlib.sha256(_canonical_json(parts).encode("utf-8")).hexdigest()[:length]


def _canonical_json(parts: tuple[object, ...]) -> str:
    # Most ids hash a few strings and integers: their JSON array is written directly (the encoder's
    # own string escaping, the same text), anything else goes through the encoder.
    items = []
    for part in parts:
        kind = type(part)
        if kind is str:
            items.append(_json_string(part))
        elif kind is int:
            items.append(int.__repr__(part))
        else:
            return _CANONICAL.encode(parts)
    return "[" + ",".join(items) + "]"


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
