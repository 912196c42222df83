import pandas as pd

from tasks.ingest.screenplay import cue_name, parse_blocks
from tasks.ingest.split_chunks import chunk_spans, chunks_for_document
from tasks.ingest.split_sentences import sentences_for_document, split_range
from tasks.text import count_tokens, detect_language, index_terms

SCENE = """1 INT. KITCHEN - NIGHT 1

MARGARET HALE (60s) pours tea. Mr. Pryce waits.

MARGARET (V.O.)
(quietly)
Tom, listen to me. The key stays here.

TOM (O.S.)
Why?

MARGARET (CONT'D)
Because I said so.

CUT TO:
"""


def test_cues_strip_extensions():
    assert cue_name("MARGARET (V.O.)") == ("MARGARET", "V.O.")
    assert cue_name("TOM (O.S.)") == ("TOM", "O.S.")
    assert cue_name("MARGARET (CONT'D)") == ("MARGARET", "CONT'D")
    assert cue_name("DR. JONES") == ("DR. JONES", None)
    assert cue_name("CUT TO:") is None
    assert cue_name("BA 1880 MOSCOW On time.") is None
    assert cue_name("He smiles.") is None


def test_blocks_pair_cues_with_dialogue():
    blocks = parse_blocks(SCENE, 0, len(SCENE), "en")
    kinds = [b.kind for b in blocks]
    assert kinds == [
        "heading",
        "action",
        "cue",
        "parenthetical",
        "dialogue",
        "cue",
        "dialogue",
        "cue",
        "dialogue",
        "transition",
    ]
    dialogue = [b for b in blocks if b.kind == "dialogue"]
    assert [b.speaker for b in dialogue] == ["MARGARET", "TOM", "MARGARET"]
    assert SCENE[dialogue[1].start : dialogue[1].end] == "Why?"


def test_chinese_dialogue_blocks():
    text = "3.王子神油店日内\n宾馆老板：房东电话又打我哪了。\n程勇做了个感谢的手势。\n"
    blocks = parse_blocks(text, 0, len(text), "zh")
    assert [b.kind for b in blocks] == ["heading", "cue", "dialogue", "action"]
    assert blocks[2].speaker == "宾馆老板" and text[blocks[2].start : blocks[2].end] == "房东电话又打我哪了。"


def test_sentences_respect_abbreviations_and_spans():
    text = "Mr. Pryce waits. He smiles at J. Smith! Then he leaves."
    spans = split_range(text, 0, len(text), "en")
    assert [text[s:e] for s, e, _ in spans] == [
        "Mr. Pryce waits.",
        "He smiles at J. Smith!",
        "Then he leaves.",
    ]
    zh = "程勇到了。他笑了！然后走了"
    assert [zh[s:e] for s, e, _ in split_range(zh, 0, len(zh), "zh")] == [
        "程勇到了。",
        "他笑了！",
        "然后走了",
    ]


def test_chunks_stay_inside_sections_and_sentences_map_to_chunks():
    text = SCENE + "\n" + "EXT. YARD - DAY\n\n" + " ".join(f"Line {i} is here." for i in range(400)) + "\n"
    yard = text.index("EXT. YARD")
    sections = pd.DataFrame(
        [
            {"section_id": "s1", "ordinal": 1, "char_start": 0, "char_end": yard - 1},
            {"section_id": "s2", "ordinal": 2, "char_start": yard, "char_end": len(text) - 1},
        ]
    )
    rows = chunks_for_document("d", text, "en", "screenplay", sections, chunk_tokens=200)
    chunks = pd.DataFrame(rows)
    assert (chunks.groupby("section_id").size() >= 1).all()
    for row in rows:
        section = sections[sections.section_id == row["section_id"]].iloc[0]
        assert section.char_start <= row["char_start"] < row["char_end"] <= section.char_end
        assert text[row["char_start"] : row["char_end"]] == row["text"]
        assert row["n_tokens"] <= 2 * 200
    assert len(chunks[chunks.section_id == "s2"]) >= 3
    sentences = sentences_for_document("d", text, "en", "screenplay", sections, chunks)
    assert {s["speaker"] for s in sentences} >= {"MARGARET", "TOM", None}
    for sentence in sentences:
        chunk = chunks[chunks.chunk_id == sentence["chunk_id"]].iloc[0]
        assert chunk.char_start <= sentence["char_start"] < chunk.char_end


def test_cue_is_never_split_from_its_dialogue():
    spans = chunk_spans(SCENE, 0, len(SCENE), "en", "screenplay", chunk_tokens=12)
    for start, _ in spans:
        assert not SCENE[start:].startswith(("Tom, listen", "Why?", "Because I said"))


def test_language_and_terms():
    assert detect_language("程勇向烟灰缸里弹了弹烟灰") == "zh"
    assert detect_language("John watches the van.") == "en"
    assert index_terms("John walked to the houses", "en") == ["john", "walk", "house"]
    assert "烟灰" in index_terms("弹了弹烟灰", "zh")
    assert count_tokens("程勇 went home.") == 5


def test_action_after_dialogue_without_a_blank_line_ends_the_speech():
    text = (
        "BANKY\nI've got a weird thing for girls who\nsay 'aboot'.\n"
        "The phone starts ringing. Holden answers it.\n"
        "HOLDEN\nIt's the one across from the post\noffice.\nHe smiles.\n"
    )
    blocks = parse_blocks(text, 0, len(text), "en")
    assert [b.kind for b in blocks] == ["cue", "dialogue", "action", "cue", "dialogue", "action"]
    assert text[blocks[2].start : blocks[2].end] == "The phone starts ringing. Holden answers it."
    # Dialogue that merely continues a sentence over a line break stays dialogue.
    wrapped = "ANNA\nIt was Tom who\nHolden says took it.\n"
    assert [b.kind for b in parse_blocks(wrapped, 0, len(wrapped), "en")] == ["cue", "dialogue"]
