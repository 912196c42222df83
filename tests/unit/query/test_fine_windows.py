"""The fine-window baseline's windows: one section each, about the asked size, deterministic ids,
dense scores from the window's own vector or its best sentence, and evidence cut at the token
budget."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.query.hybrid.fine_windows import (
    build_windows,
    dense_window_scores,
    fine_search,
    window_spans,
    with_vectors,
    within_budget,
)


def _sentences(rows: list[tuple[str, str, str, str | None]]) -> pd.DataFrame:
    """(section id, chunk id, text, speaker) rows in reading order."""
    return pd.DataFrame(
        [
            {"sentence_id": f"s{i}", "section_id": sec, "chunk_id": chk, "text": text, "speaker": speaker}
            for i, (sec, chk, text, speaker) in enumerate(rows)
        ]
    )


def test_a_window_never_crosses_a_section_boundary() -> None:
    # Section a has 3 words in all: far under the size, yet it never joins b.
    assert window_spans(["a", "a", "b", "b"], [1, 2, 3, 4], size=40) == [(0, 2), (2, 4)]


def test_windows_close_at_the_size_and_a_short_tail_joins_the_window_before() -> None:
    words = [5, 5, 5, 5, 5, 5, 1]
    # 10 words close a window; the last sentence (1 word, under half a window) joins the third.
    assert window_spans(["a"] * 7, words, size=10) == [(0, 2), (2, 4), (4, 7)]
    # A tail of half a window or more stands alone.
    assert window_spans(["a"] * 5, [5, 5, 5, 5, 5], size=10) == [(0, 2), (2, 4), (4, 5)]
    # A sentence longer than the window is a window of its own.
    assert window_spans(["a", "a", "a"], [3, 30, 8], size=10) == [(0, 2), (2, 3)]


def test_windows_tile_the_sentences_with_deterministic_ids() -> None:
    rows = [
        ("sec1", "c1", "INT. KITCHEN - NIGHT", None),
        ("sec1", "c1", "Tom opens the drawer and takes out the brass key.", None),
        ("sec1", "c2", "Where did you find it?", "MARGARET"),
        ("sec2", "c3", "EXT. HARBOUR - DAY", None),
        ("sec2", "c3", "The boats are in.", None),
    ]
    windows = build_windows(_sentences(rows), "en", size=8)
    again = build_windows(_sentences(rows), "en", size=8)
    assert windows.window_ids == again.window_ids and len(set(windows.window_ids)) == len(windows)
    assert all(w.startswith("win_") for w in windows.window_ids)
    assert list(windows.starts) == [0, 2, 3] and list(windows.ends) == [2, 3, 5]
    assert windows.section_ids == ["sec1", "sec1", "sec2"]
    assert windows.chunk_ids == ["c1", "c2", "c3"]  # the chunk of each window's first sentence
    assert windows.texts[1] == "MARGARET: Where did you find it?"  # dialogue keeps its speaker cue
    assert windows.n_tokens[1] == 8
    # Another text in the same place gives another id; the other windows keep theirs.
    rows[1] = ("sec1", "c1", "Tom hides the key.", None)
    changed = build_windows(_sentences(rows).assign(sentence_id=["x0", "s1", "s2", "s3", "s4"]), "en", size=8)
    assert changed.window_ids[0] != windows.window_ids[0] and changed.window_ids[2] == windows.window_ids[2]


def test_windows_in_chinese_count_characters() -> None:
    rows = [("sec1", "c1", "程勇向烟灰缸里弹了弹烟灰。", None), ("sec1", "c1", "电话铃声响起。", None)]
    assert list(build_windows(_sentences(rows), "zh", size=16).starts) == [0]  # 13 + 7 characters reach 16
    windows = build_windows(_sentences(rows), "zh", size=12)
    assert list(windows.starts) == [0, 1]  # 13 characters close a window; a 7-character tail stands alone
    assert windows.bm25.scores("烟灰")[0] > 0


def test_dense_score_is_the_best_sentence_and_search_fuses_both_rankings() -> None:
    rows = [("a", "c", "red apple", None), ("a", "c", "green pear", None), ("b", "c", "blue sky", None)]
    windows = build_windows(_sentences(rows), "en", size=2)  # [0], [1], [2]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    query = np.array([0.0, 1.0], dtype=np.float32)
    np.testing.assert_allclose(dense_window_scores(windows, vectors, query), [0.0, 1.0, 0.8], atol=1e-6)
    assert dense_window_scores(windows, vectors, None) is None
    assert dense_window_scores(windows, vectors, np.ones(3, dtype=np.float32)) is None
    ranked = fine_search(windows, vectors, "blue", query, candidates=3, rrf_k=10)
    assert ranked[0][0] == 2  # first by BM25, second by dense: ahead of the dense-only first
    assert [p for p, _ in ranked] == [2, 1, 0]


def test_a_window_with_its_own_vector_is_scored_by_its_whole_text() -> None:
    # Two sentences that each half match the query; together, in one window, they match it whole.
    rows = [("a", "c", "red", None), ("a", "c", "pear", None), ("b", "c", "sky", None)]
    windows = build_windows(_sentences(rows), "en", size=2)  # [0, 1], [2]
    sentence_vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6]], dtype=np.float32)
    query = np.array([0.6, 0.8], dtype=np.float32)
    by_sentence = dense_window_scores(windows, sentence_vectors, query)
    np.testing.assert_allclose(by_sentence, [0.8, 0.96], atol=1e-6)  # the sky line wins by one sentence

    texts: list[list[str]] = []

    def embed(batch: list[str]) -> np.ndarray:
        texts.append(list(batch))
        return np.array([[3.0, 4.0] if "pear" in t else [8.0, 6.0] for t in batch], dtype=np.float32)

    embedded = with_vectors(windows, embed)
    assert texts == [windows.texts]  # each window's whole text, once, in window order
    np.testing.assert_allclose(np.linalg.norm(embedded.vectors, axis=1), [1.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(dense_window_scores(embedded, sentence_vectors, query), [1.0, 0.96], atol=1e-6)
    assert windows.vectors is None  # the windows passed in are unchanged
    assert with_vectors(windows, None) is windows
    # A query vector of another size scores by neither.
    assert dense_window_scores(embedded, sentence_vectors, np.ones(3, dtype=np.float32)) is None


def test_windows_are_taken_in_rank_order_while_they_fit_the_budget() -> None:
    ranked = [(3, 0.9), (1, 0.8), (0, 0.7), (2, 0.6)]
    tokens = np.array([50, 40, 10, 30])
    # 30 + 40; window 0 (50) would pass 75 and is skipped, window 2 (10) would too
    assert within_budget(ranked, tokens, 75) == [(3, 0.9), (1, 0.8)]
    assert within_budget(ranked, tokens, 80) == [(3, 0.9), (1, 0.8), (2, 0.6)]
    assert within_budget(ranked, tokens, 130) == ranked
    assert within_budget(ranked, tokens, 5) == []
