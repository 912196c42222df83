"""The one retry rule: which failures are sent again, how long to wait, and what a grouped reply
that left items out leads to."""

from __future__ import annotations

from tasks.llm.client.retry import (
    attempt_timeout,
    backoff_delay,
    is_retryable,
    larger_reply_limit,
    regroup_missing,
    split_cut,
)


def test_only_failures_that_may_pass_are_retried() -> None:
    assert is_retryable("timeout", None) and is_retryable("connect", None)
    assert is_retryable("http", 429) and is_retryable("http", 503)
    assert not is_retryable("http", 400) and not is_retryable("protocol", None)


def test_waits_follow_the_backoff_and_never_undercut_the_server() -> None:
    assert backoff_delay(0.5, 2, None, 1.0) == 2.0
    assert backoff_delay(0.5, 0, 7.0, 1.0) == 7.0  # Retry-After wins when longer
    assert backoff_delay(0.5, 1, 0.0, 1.0) == 1.0  # a server's 0 keeps ours
    assert attempt_timeout(30.0, 2, 1000.0) == 120.0 and attempt_timeout(30.0, 2, 50.0) == 50.0


def test_a_cut_reply_gets_twice_the_limit_within_the_retry_cap_and_the_context() -> None:
    assert larger_reply_limit(500, 4096, None) == 1000
    assert larger_reply_limit(3000, 4096, None) == 4096
    assert larger_reply_limit(500, 4096, 700) == 700


def test_items_left_out_are_asked_again_in_smaller_groups_down_to_one() -> None:
    some = regroup_missing(["a", "b", "c", "d"], ["b", "d"])
    assert some.again == [["b", "d"]] and some.lost == []
    none = regroup_missing(["a", "b", "c"], ["a", "b", "c"])
    assert none.again == [["a", "b"], ["c"]] and none.lost == []
    alone = regroup_missing(["a"], ["a"])
    assert alone.again == [] and alone.lost == ["a"] and "asked alone" in alone.why_lost
    assert regroup_missing(["a", "b"], []).again == []
    assert split_cut(["a", "b", "c"]) == [["a", "b"], ["c"]] and split_cut(["a"]) == []


def test_asking_again_always_ends_with_every_item_answered_or_lost() -> None:
    """Whatever a reply leaves out, every new group is smaller than the one before it."""
    groups, rounds = [[str(k) for k in range(64)]], 0
    while groups:
        rounds += 1
        next_groups = []
        for group in groups:
            regrouped = regroup_missing(group, group[1:])  # the reply answers only the first item
            assert all(len(new) < len(group) for new in regrouped.again)
            next_groups += regrouped.again
        groups = next_groups
    assert rounds <= 64
