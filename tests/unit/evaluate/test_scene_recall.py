"""Scene recall read three ways: any gold, every gold, and at the baseline's scene count."""

from __future__ import annotations

import pandas as pd

from flows.evaluation.scene_recall import question_scene_recall, scene_recall_rows, summarize_scene_recall


def test_any_every_and_the_first_k_distinct_scenes():
    assert question_scene_recall(["a", "b"], ["x", "a", "a", "y", "b"]) == {
        "any": 1.0, "every": 1.0, "fraction": 1.0, "scenes": 4
    }
    assert question_scene_recall(["a", "b"], ["x", "a", "a", "y", "b"], keep=2) == {
        "any": 1.0, "every": 0.0, "fraction": 0.5, "scenes": 2
    }
    assert question_scene_recall(["a"], ["x"])["any"] == 0.0


def _rows(evidence: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"qid": q, "doc_id": "d", "language": "en", "qtype": "t", "status": "answered", "sample": 0,
             "evidence_section_ids": e, "latency_ms": 10.0}
            for q, e in evidence.items()
        ]
    )


def test_nkw_is_cut_to_the_baselines_scene_count_per_question():
    nkw = _rows({"q1": ["s1", "s2", "s3", "s4"], "q2": ["s9", "s8"]})
    hybrid = _rows({"q1": ["s3"], "q2": ["s8", "s7"]})
    rows = scene_recall_rows(nkw, hybrid, {"q1": ["s3"], "q2": ["s8"], "q3": ["s1"]})
    assert list(rows["qid"]) == ["q1", "q2"]  # q3 was not answered by either system
    q1 = rows.set_index("qid").loc["q1"]
    assert q1["nkw_every"] == 1.0 and q1["nkw_equal_every"] == 0.0  # s3 is NKW's third scene, baseline kept 1
    summary = summarize_scene_recall(rows).iloc[0]
    assert summary["n"] == 2 and summary["hybrid_every"] == 1.0 and summary["nkw_equal_every"] == 0.5


def test_the_fine_window_baseline_beside_and_nkw_at_its_scene_count():
    nkw = _rows({"q1": ["s1", "s2", "s3", "s4"], "q2": ["s9", "s8"]})
    hybrid = _rows({"q1": ["s3"], "q2": ["s8", "s7"]})
    fine = _rows({"q1": ["s5", "s3", "s6"], "q2": ["s7"]})
    rows = scene_recall_rows(nkw, hybrid, {"q1": ["s3"], "q2": ["s8"]}, hybrid_fine=fine)
    by_qid = rows.set_index("qid")
    assert by_qid.loc["q1", "hybrid_fine_every"] == 1.0 and by_qid.loc["q2", "hybrid_fine_any"] == 0.0
    # NKW keeps three scenes on q1 (the fine baseline's count): s3 is among them; one on q2: s9 only.
    assert by_qid.loc["q1", "nkw_equal_fine_every"] == 1.0 and by_qid.loc["q2", "nkw_equal_fine_every"] == 0.0
    summary = summarize_scene_recall(rows).iloc[0]
    assert summary["hybrid_fine_every"] == 0.5 and summary["hybrid_fine_scenes"] == 2.0
    assert summary["hybrid_fine_p50_ms"] == 10.0
    # A question the fine baseline did not answer is left out for all three.
    partial = scene_recall_rows(nkw, hybrid, {"q1": ["s3"], "q2": ["s8"]}, _rows({"q2": ["s8"]}))
    assert list(partial["qid"]) == ["q2"]
    # Without its run the figures are the two-system ones.
    assert "hybrid_fine_every" not in summarize_scene_recall(scene_recall_rows(nkw, hybrid, {"q1": ["s3"]}))
