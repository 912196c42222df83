"""Final Draft (.fdx) screenplays: the XML's paragraphs, typed, read into plain screenplay text.

The XML is untrusted: a document type declaration is refused before anything expands, so an
entity bomb ("billion laughs") or an external entity never gets read (defusedxml when installed;
the same refusal through expat's own hooks otherwise).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any
from xml.parsers import expat

from tasks.ingest.read_input import InputRefused
from tasks.ingest.render_screenplay import Paragraph, render

# Final Draft's paragraph types and what they are in plain text; any other type reads as action.
TYPES = {
    "scene heading": "heading",
    "action": "action",
    "general": "action",
    "character": "character",
    "dialogue": "dialogue",
    "parenthetical": "parenthetical",
    "transition": "transition",
    "shot": "shot",
}
DTD_REFUSED = "XML with a document type declaration (DTD) refused: its entities could expand without bound"


def fdx_text(data: bytes) -> str:
    """The plain screenplay text of a Final Draft document; InputRefused when it is none."""
    root = parse_xml(data)
    content = root.find("Content")
    if root.tag != "FinalDraft" or content is None:
        raise InputRefused("not a Final Draft script (no <FinalDraft><Content>)")
    paragraphs = [_paragraph(element) for element in content.iter("Paragraph")]
    title = _title(root)
    text = render([p for p in paragraphs if p.text.strip()])
    return f"Title: {title}\n\n{text}" if title else text


def parse_xml(data: bytes) -> ElementTree.Element:
    """The root element of untrusted XML; InputRefused for a DTD, entities or malformed XML."""
    try:
        from defusedxml import DefusedXmlException
        from defusedxml.ElementTree import fromstring
    except ImportError:
        return _parse_guarded(data)
    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        raise InputRefused(DTD_REFUSED) from None
    except ElementTree.ParseError as exc:
        raise InputRefused(f"malformed XML: {exc}") from None


def _parse_guarded(data: bytes) -> ElementTree.Element:
    """What defusedxml does, by hand: a first pass through expat stops at the first byte of any DTD
    (without one, no entity but the five predefined can exist); only then is the tree built."""

    def refuse(*_: Any) -> None:
        raise InputRefused(DTD_REFUSED)

    scan = expat.ParserCreate()
    scan.StartDoctypeDeclHandler = refuse
    scan.EntityDeclHandler = refuse
    scan.ExternalEntityRefHandler = refuse
    try:
        scan.Parse(data, True)
        return ElementTree.fromstring(data)
    except (expat.ExpatError, ElementTree.ParseError) as exc:
        raise InputRefused(f"malformed XML: {exc}") from None


def _paragraph(element: ElementTree.Element) -> Paragraph:
    kind = TYPES.get((element.get("Type") or "").strip().lower(), "action")
    # A paragraph's text is split into styled runs (<Text Style="Bold">); a <Tab/> is a space.
    parts = []
    for child in element:
        if child.tag == "Text":
            parts.append(child.text or "")
        elif child.tag == "Tab":
            parts.append(" ")
    text = "".join(parts).replace("\r\n", "\n").replace("\r", "\n")
    number = (element.get("Number") or "").strip() or None
    return Paragraph(kind, text, number if kind == "heading" else None)


def _title(root: ElementTree.Element) -> str:
    """The first line of the title page, if the document has one."""
    page = root.find("TitlePage")
    for element in page.iter("Paragraph") if page is not None else ():
        text = " ".join("".join(t.text or "" for t in element.iter("Text")).split())
        if text:
            return text
    return ""
