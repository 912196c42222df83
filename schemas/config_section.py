"""The base of every configuration section: unknown keys are errors, values are frozen, and every
number is finite and inside a range, so a value that validates never breaks a later stage."""

from __future__ import annotations

import math
from urllib.parse import urlsplit

import annotated_types
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

# The ceiling of a number whose field declares none: counts, tokens and seconds far past any real
# use, and far below what C code (sizes, timers, thread pools) can hold.
DEFAULT_MAX = 10_000_000
SIZE_PATTERN = r"^[0-9]{1,9}(\.[0-9]{1,6})? ?[KMGT]i?B$"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: object, info: ValidationInfo) -> object:
        """Numbers without a declared upper bound get DEFAULT_MAX (and NaN never passes)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        field = cls.model_fields[info.field_name]
        if not any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in field.metadata):
            if abs(value) > DEFAULT_MAX:
                raise ValueError(f"must be at most {DEFAULT_MAX:,}")
        return value


def check_url(value: str | None) -> str | None:
    """An http(s) URL with a host and a valid port, parsed now rather than at the first request."""
    if value is None:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise ValueError(f"not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1")
    if any(ord(c) < 33 or ord(c) == 127 for c in value):
        raise ValueError("must not hold spaces or control characters")
    return value
