"""Fountain, Final Draft and PDF read into plain screenplay text: the markup each format adds is
gone, scene headings come out exact, and untrusted files are refused in one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tasks.ingest import read_fdx
from tasks.ingest.pdf_pages import Line, PageLines, Run, pages_text
from tasks.ingest.read_fdx import fdx_text
from tasks.ingest.read_formats import file_text
from tasks.ingest.read_fountain import fountain_text
from tasks.ingest.read_input import InputRefused
from tasks.ingest.segment_sections import segment


def headings(text: str, language: str = "en") -> list[str]:
    rows, _ = segment("d", text, language, "screenplay")
    return [r["heading"] for r in rows if r["section_kind"] == "scene"]


FOUNTAIN = """Title: _The Pier_
Author: Someone
    and Someone Else

# ACT ONE
= The pier at night.

INT. PIER OFFICE - NIGHT #7#

A lamp. [[a note for the director]] Rain on the glass.
[[a note on its own line]]
/* a cut scene
EXT. CUT - DAY
nobody reads this */
MARA
(quietly)
Where is the **key**?

@McCLANE
Under the stone.

@林舟
钥匙在石头下面。

CUT TO:

.SNOWY FIELD

===

!INT. is how the letters begin, Mara says.

> THE END <
"""


def test_fountain_markup_is_read_per_the_spec():
    text = fountain_text(FOUNTAIN)
    assert "note" not in text and "cut scene" not in text and "EXT. CUT" not in text
    assert "ACT ONE" not in text and "The pier at night" not in text and "===" not in text
    assert "A lamp.  Rain on the glass." in text  # the note leaves its line, not a blank line
    assert text.startswith("Title: The Pier\nAuthor: Someone and Someone Else\n\n")
    assert "MARA\n(quietly)\nWhere is the key?" in text
    assert "@McCLANE\nUnder the stone." in text  # forced cue: the plain-text reader knows "@" too
    assert "林舟：钥匙在石头下面。" in text  # Chinese speech on one line, as Chinese scripts write it
    assert "\nCUT TO:\n" in text and "\nTHE END\n" in text
    # "#7#" prints in both margins; the forced heading keeps no period; "!" keeps a line action.
    assert headings(text) == ["7 INT. PIER OFFICE - NIGHT 7", "SNOWY FIELD"]
    assert "INT. is how the letters begin" in text


def test_fountain_unclosed_boneyard_stays_text():
    assert "/* not closed" in fountain_text("INT. A - DAY\n\n/* not closed\n")


FDX = """<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<FinalDraft DocumentType="Script" Template="No" Version="5">
<Content>
<Paragraph Type="Scene Heading" Number="12"><Text>INT. HOUSE - DAY</Text></Paragraph>
<Paragraph Type="Action"><Text>A man </Text><Text Style="Bold">waits</Text><Text>.</Text></Paragraph>
<Paragraph Type="Character"><Text>McCLANE</Text></Paragraph>
<Paragraph Type="Parenthetical"><Text>(quietly)</Text></Paragraph>
<Paragraph Type="Dialogue"><Text>Yippee.</Text></Paragraph>
<Paragraph Type="Shot"><Text>CLOSE ON THE KEY</Text></Paragraph>
<Paragraph Type="Transition"><Text>CUT TO:</Text></Paragraph>
<Paragraph Type="Scene Heading"><Text>SNOWY FIELD</Text></Paragraph>
<DualDialogue>
<Paragraph Type="Character"><Text>林舟</Text></Paragraph>
<Paragraph Type="Dialogue"><Text>你好。</Text></Paragraph>
</DualDialogue>
</Content>
<TitlePage><Content><Paragraph><Text>The House</Text></Paragraph></Content></TitlePage>
</FinalDraft>
"""


def test_fdx_paragraph_types_become_screenplay_text():
    text = fdx_text(FDX.encode())
    assert text.startswith("Title: The House\n\n")
    assert "A man waits." in text and "@McCLANE\n(quietly)\nYippee." in text
    assert "\n\nCLOSE ON THE KEY\n\nCUT TO:\n\n" in text and "林舟：你好。" in text
    assert headings(text) == ["12 INT. HOUSE - DAY 12", "SNOWY FIELD"]


BOMB = (
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
    + ']><FinalDraft><Content><Paragraph Type="Action"><Text>&i;</Text></Paragraph></Content></FinalDraft>'
)
EXTERNAL = (
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    '<FinalDraft><Content><Paragraph Type="Action"><Text>&x;</Text></Paragraph></Content></FinalDraft>'
)


@pytest.mark.parametrize(
    "parse", [read_fdx.parse_xml, read_fdx._parse_guarded], ids=["default", "no-defusedxml"]
)
@pytest.mark.parametrize("document", [BOMB, EXTERNAL], ids=["entity-bomb", "external-entity"])
def test_xml_with_a_dtd_is_refused_before_anything_expands(parse, document):
    with pytest.raises(InputRefused, match="document type declaration"):
        parse(document.encode())


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"<FinalDraft><Content>", "malformed XML"), (b"<html><body/></html>", "not a Final Draft script")],
)
def test_a_broken_or_foreign_fdx_is_refused(data, reason):
    with pytest.raises(InputRefused, match=reason):
        fdx_text(data)


def _line(y: float, *runs: tuple[float, str]) -> Line:
    return Line(y, [Run(x, y, text, 12.0) for x, text in runs])


def test_pdf_page_furniture_is_removed_and_a_split_speech_rejoined():
    first = [
        _line(700, (72, "12."), (108, "INT. HOUSE - DAY"), (540, "12."), (570, "*")),
        _line(676, (108, "A man waits by the door. Rain")),
        _line(664, (108, "runs down the glass.")),
        _line(640, (252, "MARA (V.O.)")),
        _line(628, (180, "The key is under")),
        _line(616, (252, "(MORE)")),
        _line(50, (432, "(CONTINUED)")),
    ]
    second = [
        _line(730, (72, "12"), (108, "CONTINUED:"), (540, "12")),
        _line(706, (252, "MARA (CONT'D)")),
        _line(694, (180, "the stone.")),
        _line(682, (180, "Go.")),
    ]
    later = [
        [_line(706, (108, f"{word} falls.")), _line(694, (108, f"The {word.lower()} stops."))]
        for word in ("Rain", "Snow", "Night")
    ]
    pages = [PageLines(first, 612.0, 792.0)]
    for number, lines in enumerate([second, *later], start=2):
        header = _line(756, (72, "Blue Revision"), (540, f"{number}."))
        pages.append(PageLines([header, *lines], 612.0, 792.0))
    text = pages_text(pages)
    assert text.startswith(
        "12 INT. HOUSE - DAY 12\n\nA man waits by the door. Rain\nruns down the glass.\n\n"
        "MARA (V.O.)\nThe key is under\nthe stone.\nGo.\n\nRain falls.\nThe rain stops.\n\nSnow falls."
    ), text
    for furniture in ("MORE", "CONTINUED", "CONT'D", "Blue Revision", "2.", "*"):
        assert furniture not in text, furniture


def test_a_pdf_is_read_as_one_whatever_its_name_and_a_fake_one_is_refused(tmp_path):
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    pdf.drawString(108, 700, "INT. HOUSE - DAY")
    pdf.save()
    text, encoding, _ = file_text(Path("script.txt"), buffer.getvalue(), 10_000)
    assert (text, encoding) == ("INT. HOUSE - DAY\n", "pdf")
    with pytest.raises(InputRefused, match="not a PDF"):
        file_text(Path("script.pdf"), "程勇走进药店。".encode("gb18030"), 10_000)
    with pytest.raises(InputRefused, match="unreadable PDF"):
        file_text(Path("script.pdf"), buffer.getvalue()[:400], 10_000)
    with pytest.raises(InputRefused, match="too large"):
        file_text(Path("script.pdf"), buffer.getvalue(), 5)
