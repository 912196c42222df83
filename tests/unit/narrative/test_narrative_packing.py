"""Splitting a packed narrative reply back into one reply per chunk."""

from schemas.responses.narrative import EventItem, NarrativeReply, OccasionItem
from tasks.llm.requests.chunk_packs import Member
from tasks.narrative.packing import _named, split_narrative

MEMBERS = (
    Member("c1", 0, "ALICE waits at the pier."),
    Member("c2", 30, "Al and Bob row out to the Lighthouse."),
)


def _occasion(occasion_type: str, participants: list[str], setting: str | None = None) -> OccasionItem:
    return OccasionItem(
        description="A gathering.", occasion_type=occasion_type, participants=participants, setting=setting
    )


def test_names_count_as_whole_words_of_the_folded_text_only() -> None:
    folded = "al and bob row out to the lighthouse."
    assert _named(folded, ["Al", "BOB", "Lighthouse"]) == 3
    assert _named(folded, ["Ali", "", "Row Out", "ro"]) == 1  # "ro" inside "row" is no word
    assert _named("alice waits at the pier.", ["Al"]) == 0  # a prefix of "alice" is no name


def test_units_without_a_quote_go_to_the_chunk_naming_most_of_them() -> None:
    event = EventItem(
        description="They set out.",
        event_type="action",
        participants=["Bob", "Al"],
        setting=None,
        time_cue=None,
        evidence="a quote from nowhere",
    )
    reply = NarrativeReply(
        events=[event],
        interactions=[],
        occasions=[
            _occasion("scene", ["Alice"], "the pier"),
            _occasion("situation", ["al", "Alice"]),
            _occasion("situation", ["Nobody"]),
        ],
    )
    first, second = split_narrative(reply, MEMBERS)
    assert first.events == [] and second.events == [event]
    # a scene goes to one chunk; any other occasion to every chunk naming one of it (else the first)
    assert [o.participants for o in first.occasions] == [["Alice"], ["al", "Alice"], ["Nobody"]]
    assert [o.participants for o in second.occasions] == [["al", "Alice"]]
