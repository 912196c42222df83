"""`nkw view`: one self-contained HTML page per document (inline CSS, JS and data; no server,
no network): the timeline swimlane, continuity chains, storyline DAG, summaries and entity graph.

The page is rendered by Jinja from tasks/views/templates/: `view.html` lays out the page, one
partial per section (`sections/<id>.html`) and one script per section (`scripts/<id>.js`) fill it,
so a new panel is one entry in SECTIONS and its two files; an optional panel whose data the bundle
lacks is left out, with its script and its link. The data is embedded as JSON; the graphs are drawn
and laid out by the libraries vendored in tasks/views/vendor/ (LIBRARIES), each inlined with its
license text."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from tasks.files import write_output
from tasks.views.bundle import Bundle
from tasks.views.page_data import page_data

VENDOR = Path(__file__).with_name("vendor")


@dataclass(frozen=True)
class Library:
    """A vendored script: its npm package and version, and the license file kept beside it."""

    name: str
    package: str
    version: str
    script: str
    licenses: tuple[str, ...]
    bundles: str = ""


# In load order: each extension registers itself on the `cytoscape` global the first one defines.
LIBRARIES = (
    Library("Cytoscape.js", "cytoscape", "3.35.0", "cytoscape.min.js", ("LICENSE.cytoscape",)),
    Library(
        "cytoscape-dagre",
        "cytoscape-dagre",
        "4.0.1",
        "cytoscape-dagre.min.js",
        ("LICENSE.cytoscape-dagre", "LICENSE.dagre"),
        bundles="dagre 3.0.0 and graphlib 4.0.1",
    ),
    Library("layout-base", "layout-base", "2.0.1", "layout-base.js", ("LICENSE.layout-base",)),
    Library("cose-base", "cose-base", "2.2.0", "cose-base.js", ("LICENSE.cose-base",)),
    Library(
        "cytoscape-fcose", "cytoscape-fcose", "2.2.0", "cytoscape-fcose.js", ("LICENSE.cytoscape-fcose",)
    ),
)


@dataclass(frozen=True)
class Section:
    """One panel of the page: its anchor id (also its partial's, script's and data key's name), nav
    title, and whether it is left out when its data is empty (a bundle built before its tables)."""

    id: str
    title: str
    optional: bool = False


# In page order; a later script may use what an earlier one defined (the summaries colour their
# storylines as the DAG does and zoom it to one).
SECTIONS = (
    Section("swimlane", "Swimlane"),
    Section("chains", "Continuity chains"),
    Section("dag", "Storyline DAG"),
    Section("summaries", "Summaries", optional=True),
    Section("graph", "Entity graph"),
)
# Helpers every section script uses, before the sections; the start script runs after them.
COMMON_SCRIPT, START_SCRIPT = "common.js", "start.js"

# A source map comment would send a browser with developer tools open looking for a file we do not ship.
SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)

_templates = Environment(
    loader=PackageLoader("tasks.views", "templates"),
    autoescape=select_autoescape(default=True),
    keep_trailing_newline=True,
)


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


def _script_safe(text: str) -> str:
    """Text that cannot end the script element it sits in (`</` written as `<\\/`, the same in JS)."""
    return text.replace("</", "<\\/")


def library_version(script: str) -> str:
    """The version the library declares in its own code (`version: "3.35.0"`-like), or ''."""
    found = re.search(r"""version\s*[:=]\s*["'](\d+\.\d+\.\d+)["']""", script)
    return found.group(1) if found else ""


def library_scripts() -> list[dict[str, str]]:
    """Each vendored library's script, its license texts first as a comment (MIT asks for the notice
    in every copy, and the page is one)."""
    out = []
    for library in LIBRARIES:
        notices = "\n\n".join(
            (VENDOR / name).read_text(encoding="utf-8").strip() for name in library.licenses
        )
        script = SOURCE_MAP.sub("", (VENDOR / library.script).read_text(encoding="utf-8"))
        out.append(
            {
                "name": library.name,
                "version": library.version,
                "bundles": library.bundles,
                "code": _script_safe(
                    f"/*! {library.name} {library.version}\n{notices.replace('*/', '* /')}\n*/\n{script}"
                ),
            }
        )
    return out


def shown_sections(data: dict[str, Any]) -> list[Section]:
    """The sections the page shows: every one but an optional section with no data."""
    return [s for s in SECTIONS if not s.optional or data.get(s.id)]


def render_page(bundle: Bundle) -> str:
    """The page's HTML, from the templates; the data is JSON inside a non-executed script element."""
    values = page_data(bundle)
    sections = shown_sections(values)
    data = json.dumps(_plain(values), ensure_ascii=False, sort_keys=True)
    return _templates.get_template("view.html").render(
        title=bundle.title,
        doc_id=bundle.doc_id,
        sections=sections,
        scripts=[COMMON_SCRIPT, *(f"{s.id}.js" for s in sections), START_SCRIPT],
        libraries=library_scripts(),
        data=_script_safe(data),
    )


def write_view(bundle: Bundle, out_dir: Path) -> Path:
    return write_output(out_dir / f"{bundle.doc_id}.html", render_page(bundle))
