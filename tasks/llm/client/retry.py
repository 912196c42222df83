"""When NKW asks the model again, and how: the one place for every retry rule.

Per request (the client): a timeout, a dropped connection, HTTP 429 or 5xx is retried up to
`[llm] max_retries` times after a backoff (never sooner than the server's Retry-After), each
timeout doubling the next attempt's allowance; a reply cut at its limit is asked once more with a
larger limit; a reply that breaks the schema is asked once more with the error shown.

Per group (several numbered items in one request): a group whose reply was cut, or whose prompt
left no room for a reply, is split in two; items a reply left out are asked again in smaller
groups — together when most of the group was answered, in two halves when most was not — down
to one item each. An item left out when asked alone becomes a failures row: asking the same prompt
again would get the same (cached or deterministic) reply.
"""

from __future__ import annotations

from dataclasses import dataclass

RETRYABLE_KINDS = ("timeout", "connect")  # the request may pass when sent again
SPLIT_STATUSES = ("truncated",)  # the reply (or the prompt) did not fit: fewer items per request will


def is_retryable(kind: str, http_status: int | None) -> bool:
    """Timeouts, dropped connections, 429 and 5xx may pass on retry; other answers will not."""
    if kind in RETRYABLE_KINDS:
        return True
    return kind == "http" and (http_status == 429 or (http_status or 0) >= 500)


def backoff_delay(backoff_s: float, retry: int, retry_after: float | None, jitter: float) -> float:
    """Seconds before retry number `retry` (0-based): exponential with jitter, and never sooner than
    the server asked (its own 0 keeps ours)."""
    return max(backoff_s * (2**retry) * jitter, retry_after or 0.0)


def attempt_timeout(paced_s: float, timeouts_so_far: int, remaining_s: float) -> float:
    """One attempt's allowance: what the server's measured pace needs, doubled after each timeout of
    the same call (a slow server's work is not cancelled again at the same point), within the
    call's deadline."""
    return min(paced_s * 2**timeouts_so_far, remaining_s)


def larger_reply_limit(cut_at: int, retry_limit: int, room: int | None) -> int:
    """The limit for asking again after a reply was cut at `cut_at` tokens: twice as many, within
    `[llm] max_tokens_retry` (a looping model is not given thousands more; a big group is split
    instead) and within what the server's context leaves."""
    larger = min(2 * cut_at, max(retry_limit, cut_at))
    return larger if room is None else min(larger, room)


@dataclass(frozen=True)
class Regrouped:
    """What a group's reply leads to: groups to ask next, and items that end as failures."""

    again: list[list[str]]
    lost: list[str]
    why_lost: str


def regroup_missing(asked: list[str], missing: list[str]) -> Regrouped:
    """The next groups for the items of `asked` that its reply left out. Each new group is smaller
    than the one its items were asked in, so asking ends."""
    if not missing:
        return Regrouped([], [], "")
    if len(asked) == 1:
        return Regrouped([], list(missing), "llm missing: the reply left this item out (asked alone)")
    if 2 * len(missing) <= len(asked):  # most were answered: the rest together
        return Regrouped([list(missing)], [], "")
    half = (len(missing) + 1) // 2  # most were left out: halves, a new prompt each, asked at once
    return Regrouped([missing[:half], missing[half:]], [], "")


def split_cut(asked: list[str]) -> list[list[str]]:
    """The halves of a group whose reply (or prompt) did not fit; a single item cannot be split."""
    if len(asked) < 2:
        return []
    half = (len(asked) + 1) // 2
    return [asked[:half], asked[half:]]
