"""STAGE dev screenplays segment exactly to the release's scene titles, with parsed fields
(in memory: no build needed)."""

from __future__ import annotations

import json

from tasks.ingest.segment_sections import detect_kind, segment


def test_stage_screenplays_segment_to_the_release_titles_with_fields(shared_data):
    for line in (shared_data / "stage" / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        text, language = document["text"], document["language"]
        assert detect_kind(text, language) == "screenplay"
        rows, warnings = segment(document["doc_id"], text, language, "screenplay")
        titles = document["meta"]["scene_titles"]
        assert [r["heading"] for r in rows] == titles, document["doc_id"]
        assert not warnings, warnings
        numbers = [r["scene_number"] for r in rows]
        assert numbers == [t.split("、")[0].split(".")[0] for t in titles]
        with_fields = [r for r in rows if r["interior"] and r["time_of_day"] and r["location"]]
        if (
            language == "zh"
        ):  # every scene but the two "画面组合" (montage) headings names place, 日/夜, 内/外
            assert len(rows) - len(with_fields) == 2
            assert {r["time_of_day"] for r in rows} == {"DAY", "NIGHT", None}
            assert rows[3]["location"] == "养老院外" and rows[3]["interior"] == "EXT"
        else:
            assert len(with_fields) >= 0.95 * len(rows)
