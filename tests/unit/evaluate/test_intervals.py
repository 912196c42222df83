"""Scene hits per question and paired bootstrap intervals on setting differences."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.evaluate.ablation_scenes import format_scene_intervals
from tasks.evaluate.intervals import paired_bootstrap, scene_hits, setting_intervals


def _answers(rows: list[tuple[str, str, list[str], list[str]]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "qid": qid,
                "qtype": qtype,
                "language": "en",
                "gold_section_ids": gold,
                "gold_unmapped": [],
                "evidence_section_ids": evidence,
                "status": "answered",
                "sample": 0,
            }
            for qid, qtype, gold, evidence in rows
        ]
    )


def test_scene_hits_reads_any_and_every_and_skips_questions_without_gold():
    hits = scene_hits(
        _answers(
            [("q1", "T", ["s1", "s2"], ["s1"]), ("q2", "T", ["s1"], ["s3", "s1"]), ("q3", "T", [], ["s1"])]
        )
    ).set_index("qid")
    assert list(hits.index) == ["q1", "q2"]
    assert hits.loc["q1", "any"] == 1.0 and hits.loc["q1", "every"] == 0.0
    assert hits.loc["q2", "every"] == 1.0


def test_paired_bootstrap_brackets_the_mean_difference_and_is_deterministic():
    base = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1] * 20, dtype=float)
    better = np.ones_like(base)
    diff, low, high = paired_bootstrap(base, better)
    assert diff == better.mean() - base.mean()
    assert 0 < low <= diff <= high
    assert paired_bootstrap(base, better) == (diff, low, high)
    same = paired_bootstrap(base, base.copy())
    assert same == (0.0, 0.0, 0.0)


def test_setting_intervals_compare_every_setting_with_the_reference_per_group():
    full = scene_hits(_answers([(f"q{i}", "A" if i % 2 else "B", ["s"], ["s"]) for i in range(40)]))
    worse = scene_hits(
        _answers([(f"q{i}", "A" if i % 2 else "B", ["s"], ["s"] if i % 2 == 0 else []) for i in range(40)])
    )
    table = setting_intervals({"full": full, "no_x": worse}).set_index(["setting", "group"])
    assert table.loc[("no_x", "A"), "difference"] == -1.0
    assert bool(table.loc[("no_x", "A"), "excludes_zero"])
    assert table.loc[("no_x", "B"), "difference"] == 0.0
    assert not bool(table.loc[("no_x", "B"), "excludes_zero"])
    assert table.loc[("no_x", "all"), "n"] == 40


def test_the_ablation_lines_show_each_difference_with_its_interval_and_mark_the_clear_ones():
    full = scene_hits(_answers([(f"q{i}", "A", ["s"], ["s"]) for i in range(30)]))
    worse = scene_hits(_answers([(f"q{i}", "A", ["s"], []) for i in range(30)]))
    lines = format_scene_intervals(setting_intervals({"full": full, "no_x": worse}))
    assert lines[0].startswith("every gold scene")
    no_x = [line for line in lines if line.strip().startswith("no_x") and " all " in line]
    assert no_x and "-1.000 [-1.000, -1.000] *" in no_x[0]
    assert format_scene_intervals(pd.DataFrame()) == []
