import pytest

from tasks.ingest.segment_sections import detect_kind, find_headings, parse_heading, segment


@pytest.mark.parametrize(
    "line, number, interior, location, time",
    [
        ("12、INT. BEDROOM - NIGHT", "12", "INT", "BEDROOM", "NIGHT"),
        ("4、INT BAR - NIGHT", "4", "INT", "BAR", "NIGHT"),
        ("26、INT HOLDEN'S BEDROOM -NIGHT", "26", "INT", "HOLDEN'S BEDROOM", "NIGHT"),
        ("7、INT. AIRPORT - DAY.", "7", "INT", "AIRPORT", "DAY"),
        ("12 EXT. CLIFF PATH - DAWN 12", "12", "EXT", "CLIFF PATH", "DAWN"),
        ("INT./EXT. VAN - DAY", None, "INT/EXT", "VAN", "DAY"),
        ("EXT. LIGHTHOUSE GALLERY - NIGHT", None, "EXT", "LIGHTHOUSE GALLERY", "NIGHT"),
        (
            "30、INT RINK LOBBY / EXT PARKING LOT - NIGHT",
            "30",
            "INT",
            "RINK LOBBY / EXT PARKING LOT",
            "NIGHT",
        ),
        ("14 INT. LIGHTHOUSE LAMP ROOM - CONTINUOUS 14", "14", "INT", "LIGHTHOUSE LAMP ROOM", "CONTINUOUS"),
    ],
)
def test_english_headings(line, number, interior, location, time):
    heading = parse_heading(line, "en")
    assert heading is not None
    assert (heading.number, heading.interior, heading.location, heading.time_of_day) == (
        number,
        interior,
        location,
        time,
    )
    assert heading.text == line.strip()


@pytest.mark.parametrize(
    "line, location, time, interior",
    [
        ("1.\u00a0\u00a0\u00a0\u00a0\u00a0王子神油店日内", "王子神油店", "DAY", "INT"),
        ("9.街道夜外", "街道", "NIGHT", "EXT"),
        ("88..吕受益家日内", "吕受益家", "DAY", "INT"),
        ("97.画面组合", "画面组合", None, None),
        ("第3场 医院日内", "医院", "DAY", "INT"),
    ],
)
def test_chinese_headings(line, location, time, interior):
    heading = parse_heading(line, "zh")
    assert heading is not None
    assert (heading.location, heading.time_of_day, heading.interior) == (location, time, interior)


@pytest.mark.parametrize(
    "line, language",
    [
        ("FLASHBACK - INT. AIRPORT - DAY", "en"),  # a slug inside a scene, not a new scene
        (". INT. HER-STERECTOMY - NIGHT 6.", "en"),  # page furniture, not Fountain's forced heading
        ("He walks into the INT. office", "en"),
        ("Interior design matters.", "en"),
        ("117办公室日内", "zh"),  # no separator after the number
        ("程勇：我上次给你那批油，你小旅馆里摆了不。", "zh"),
        ("260", "zh"),
    ],
)
def test_lines_that_are_not_headings(line, language):
    assert parse_heading(line, language) is None


def test_fountain_forced_heading():
    heading = parse_heading(".SNOWY FIELD", "en")
    assert heading is not None and heading.location == "SNOWY FIELD"
    assert parse_heading("...and then", "en") is None


def test_scenes_cover_text_with_preamble():
    text = "Title: Test\n\n1 INT. ROOM - DAY\nA man sits.\n\nEXT. YARD - NIGHT\nRain.\n"
    rows, warnings = segment("d", text, "en", "screenplay")
    assert [r["section_kind"] for r in rows] == ["preamble", "scene", "scene"]
    assert [r["ordinal"] for r in rows] == [0, 1, 2]
    assert rows[1]["heading"] == "1 INT. ROOM - DAY" and rows[1]["time_of_day"] == "DAY"
    for row in rows:
        assert text[row["char_start"] : row["char_end"]] == row["text"]
    assert not warnings


def test_screenplay_without_headings_falls_back_with_a_warning():
    text = "JOHN\nHello.\n\nMARY\nHi.\n"
    rows, warnings = segment("d", text, "en", "screenplay")
    assert rows and rows[0]["section_kind"] == "paragraphs"
    assert warnings and "no scene headings" in warnings[0]


def test_given_sections_are_located_in_order():
    parts = ["Once upon a time there was a king.", "The king had three sons.", "The youngest was brave."]
    text = "\n\n".join(parts)
    rows, _ = segment("d", text, "en", "prose", section_texts=parts)
    assert [r["heading"] for r in rows] == ["Section 1", "Section 2", "Section 3"]
    assert rows[1]["text"] == parts[1]


def test_chapters_and_paragraph_groups():
    text = "CHAPTER I\n\nIt began.\n\nCHAPTER II\n\nIt ended.\n"
    rows, _ = segment("d", text, "en", "prose")
    assert [r["heading"] for r in rows] == ["CHAPTER I", "CHAPTER II"]
    long_text = "\n\n".join(f"Paragraph {i} " + "word " * 120 for i in range(10))
    rows, _ = segment("d", long_text, "en", "prose", paragraph_group_tokens=300)
    assert len(rows) >= 3 and all(r["section_kind"] == "paragraphs" for r in rows)
    assert rows[0]["char_start"] == 0 and rows[-1]["char_end"] == len(long_text.rstrip())


def test_detect_kind():
    assert detect_kind("INT. A - DAY\nx\n\nEXT. B - NIGHT\ny", "en") == "screenplay"
    assert detect_kind("Once upon a time.\n\nThe end.", "en") == "prose"
    assert detect_kind("anything", "en", source="x.fountain") == "screenplay"
    assert len(find_headings("1.街道日外\n程勇：好\n2.医院夜内\n", "zh")) == 2


def test_given_sections_with_carriage_returns():
    from tasks.text import normalize_text

    parts = ["First part\rcontinues here.", "Second part."]
    text = normalize_text("\n\n".join(parts))
    rows, warnings = segment("d", text, "en", "prose", section_texts=parts)
    assert len(rows) == 2 and not warnings
