"""`nkw view`: one self-contained HTML page per document (inline CSS, JS and data; no server,
no network): the timeline swimlane, continuity chains, storyline DAG and entity graph. The
page template is tasks/views/view.html; the data is embedded as JSON, and the graphs are drawn by
Cytoscape.js (MIT), inlined from tasks/views/vendor/ with its license header kept."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from tasks.files import write_output
from tasks.views.bundle import Bundle
from tasks.views.page_data import page_data

TEMPLATE = Path(__file__).with_name("view.html")
LIBRARY = Path(__file__).with_name("vendor") / "cytoscape.min.js"
PLACEHOLDER = "__NKW_DATA__"
LIBRARY_PLACEHOLDER = "__NKW_LIBRARY__"
VERSION_PLACEHOLDER = "__NKW_LIBRARY_VERSION__"


def _plain(value: Any) -> Any:
    """JSON-safe values: numpy scalars unwrapped, NaN as null, containers recursed."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def library_version(script: str) -> str:
    """The version the library declares in its own code (`version: "3.35.0"`-like), or ''."""
    found = re.search(r"""version\s*[:=]\s*["'](\d+\.\d+\.\d+)["']""", script)
    return found.group(1) if found else ""


def render_page(bundle: Bundle) -> str:
    """The page's HTML; `</` in the data is escaped so no string can close the script element."""
    data = json.dumps(_plain(page_data(bundle)), ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    script = LIBRARY.read_text(encoding="utf-8")
    template = TEMPLATE.read_text(encoding="utf-8")
    # The data goes in last, so text inside it can never be taken for a placeholder.
    page = template.replace(VERSION_PLACEHOLDER, library_version(script) or "")
    head, _, tail = page.partition(LIBRARY_PLACEHOLDER)
    return head + script + tail.replace(PLACEHOLDER, data)


def write_view(bundle: Bundle, out_dir: Path) -> Path:
    return write_output(out_dir / f"{bundle.doc_id}.html", render_page(bundle))
