"""The view's screenshots in docs/, regenerated from the bundled samples (`make screenshots`):
build both samples offline into a temporary workspace, write the screenplay's view, and shoot
each section alone (`#only-<section>`) in headless Chromium. A page that logs a console warning or
error, or is wider than its window, stops the script: a screenshot of a broken page is worse than a
stale one.

    python benchmarks/view_screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.cli.main import main as nkw  # noqa: E402
from tests.fixtures.devtools import Browser  # noqa: E402

DOC = "the_lighthouse_key"
SAMPLES = [REPO / "data" / "samples" / f"{name}.txt" for name in (DOC, "the_fisherman_and_his_wife")]
# (file in docs/, section shown alone, window width): the sections at a desktop width, and the
# swimlane as a narrow (800 px) window shows it.
SHOTS = (
    ("view_swimlane.png", "swimlane", 1200),
    ("view_continuity_chains.png", "chains", 1200),
    ("view_storyline_dag.png", "dag", 1200),
    ("view_summaries.png", "summaries", 1200),
    ("view_entity_graph.png", "graph", 1200),
    (f"swimlane_{DOC}.png", "swimlane", 800),
)
WAIT = "document.body.getAttribute('data-rendered') === '1'"


def shoot(page_file: Path, out: Path) -> list[Path]:
    written = []
    with Browser() as browser:
        for name, section, width in SHOTS:
            page = browser.open(page_file.resolve().as_uri() + f"#only-{section}", width, 900, WAIT)
            problems = page.problems()
            wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if problems or wide > 0:
                raise SystemExit(f"{name}: {wide} px too wide; console: {[str(p) for p in problems]}")
            page.screenshot(out / name, "body")
            page.close()
            written.append(out / name)
    return written


def run(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="nkw-screenshots-") as folder:
        workspace, views = Path(folder) / "ws", Path(folder) / "views"
        build = ["build", *map(str, SAMPLES), "--workspace", str(workspace), "--embeddings", "hashing"]
        if nkw([*build, "--no-prefect", "--quiet"]) != 0:
            raise SystemExit("building the samples failed")
        if nkw(["view", "--workspace", str(workspace), "--doc", DOC, "--out", str(views)]) != 0:
            raise SystemExit("writing the view failed")
        started = time.perf_counter()
        for path in shoot(views / f"{DOC}.html", out):
            print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
        print(f"{len(SHOTS)} screenshots in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="folder for the PNG files")
    run(parser.parse_args().out)
