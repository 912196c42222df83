"""`nkw view`: one self-contained HTML page per document (inline CSS, JS and data; no server,
no network): the timeline swimlane, continuity chains, storyline DAG and entity graph. The
page template is tasks/views/view.html; the data is embedded as JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tasks.views.bundle import Bundle
from tasks.views.page_data import page_data

TEMPLATE = Path(__file__).with_name("view.html")
PLACEHOLDER = "__NKW_DATA__"


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


def render_page(bundle: Bundle) -> str:
    """The page's HTML; `</` in the data is escaped so no string can close the script element."""
    data = json.dumps(_plain(page_data(bundle)), ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    return TEMPLATE.read_text(encoding="utf-8").replace(PLACEHOLDER, data)


def write_view(bundle: Bundle, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{bundle.doc_id}.html"
    path.write_text(render_page(bundle), encoding="utf-8")
    return path
