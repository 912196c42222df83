"""What the board leaves of the source budget goes to the next text-ranked places, after the
structure's passages and never over them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tasks.query.evidence.board import Passage
from tasks.query.evidence.fill import FILLED, fill_budget, overlaps, window_passage


def passage(chunk_id: str, ordinal: int, start: int, end: int, tokens: int, text: str = "x") -> Passage:
    return Passage(chunk_id, f"s{ordinal}", "", ordinal, text, tokens, start, end, 1.0, [])


def test_fill_adds_ranked_candidates_until_the_budget_is_spent_skipping_overlaps():
    chosen = [passage("c1", 1, 0, 100, 40)]
    candidates = [
        passage("c1", 1, 50, 150, 30),  # overlaps the chosen excerpt: skipped
        passage("c4", 4, 400, 480, 35),
        passage("c3", 3, 300, 380, 40),  # would pass the budget: skipped for the next that fits
        passage("c2", 2, 200, 260, 20),
    ]
    filled = fill_budget(chosen, candidates, 100)
    assert [p.chunk_id for p in filled] == ["c1", "c2", "c4"]  # story order
    assert sum(p.n_tokens for p in filled) <= 100
    assert chosen == [passage("c1", 1, 0, 100, 40)]  # the input list is left alone


def test_fill_never_displaces_the_chosen_passages_and_stops_on_a_spent_budget():
    chosen = [passage("a", 1, 0, 10, 60), passage("b", 2, 20, 30, 35)]
    assert fill_budget(chosen, [passage("c", 3, 40, 50, 5)], 100) == chosen  # 5 left: under the floor
    assert fill_budget([], [passage("c", 3, 40, 50, 5, text="  ")], 100) == []  # blank text


def test_overlap_is_by_document_offsets():
    taken = [passage("a", 1, 10, 20, 3)]
    assert overlaps(passage("a", 1, 19, 30, 3), taken)
    assert not overlaps(passage("b", 1, 20, 30, 3), taken)  # touching is not sharing


def fake_store(sentences: list[tuple[str, str]]) -> SimpleNamespace:
    """One section; sentences (chunk id, text) laid out one after another with a space."""
    starts, ends, rows, chunks, offset = [], [], [], {}, 0
    for chunk_id, text in sentences:
        starts.append(offset)
        ends.append(offset + len(text))
        rows.append({"chunk_id": chunk_id})
        chunk = chunks.setdefault(chunk_id, {"char_start": offset, "text": "", "section_id": "s1"})
        chunk["text"] += (" " if chunk["text"] else "") + text
        offset += len(text) + 1
    source = SimpleNamespace(sentence_rows=rows, sentence_spans=(np.array(starts), np.array(ends)))
    return SimpleNamespace(chunks_by_id=chunks, source=source, section_heading=lambda s: ("INT. HALL", 7))


def test_a_window_becomes_an_excerpt_of_its_first_chunk_cut_to_the_longest_excerpt():
    store = fake_store([("k1", "one two three"), ("k1", "four five six"), ("k2", "seven eight")])
    windows = SimpleNamespace(chunk_ids=["k1"], starts=np.array([0]), ends=np.array([3]))
    whole = window_passage(store, windows, 0, 50)
    # The window's third sentence lies in the next chunk: the excerpt stays inside k1.
    assert whole.text == "one two three four five six" and whole.chunk_id == "k1"
    assert (whole.char_start, whole.char_end, whole.ordinal, whole.supported_by) == (0, 27, 7, [FILLED])
    cut = window_passage(store, windows, 0, 4)
    assert cut.text == "one two three" and cut.n_tokens == 3
    assert window_passage(store, windows, 0, 2) is None  # not even its first sentence fits
