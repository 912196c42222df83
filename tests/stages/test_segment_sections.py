"""Stage segment_sections on a Fountain screenplay and a Chinese scene."""

from tasks.tables.io import read_frame


def test_sections_parse_headings(segmented):
    sections = read_frame(segmented, "sections", "kitchen").sort_values("ordinal")
    assert sections["section_kind"].tolist() == ["preamble", "scene", "scene"]
    assert sections.iloc[1][["interior", "location", "time_of_day", "scene_number"]].tolist() == [
        "INT",
        "KITCHEN",
        "NIGHT",
        "1",
    ]
    zh = read_frame(segmented, "sections", "shop").sort_values("ordinal")
    assert zh["location"].tolist() == ["王子神油店", "街道"] and zh["time_of_day"].tolist() == [
        "DAY",
        "NIGHT",
    ]
