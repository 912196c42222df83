"""`nkw ablate` over the bundled samples (a build-time variant reuses the base's unchanged stages)
and `nkw report` rendered in headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil

import matplotlib.pyplot as plt
import pytest
from rich.console import Console

from flows.cli.main import main
from flows.runtime import Meter
from tests.fixtures.browser import dump_dom, png_pixels, screenshot
from tasks.tables.io import read_frame
from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


@pytest.fixture(scope="module")
def ablated(sample_workspace, tmp_path_factory):
    """A copy of the sample workspace (variants are written under it) with one small grid run."""
    from tasks.tables.io import Workspace

    root = tmp_path_factory.mktemp("ablate") / "ws"
    shutil.copytree(sample_workspace.root, root, ignore=shutil.ignore_patterns("variants"))
    code = main(
        [
            "ablate",
            "-w",
            str(root),
            "--questions",
            str(QUESTIONS),
            "--embeddings",
            "hashing",
            "--no-prefect",
            "--settings",
            "full,no_hierarchy,saber_raw,follow_up_0",
            "--limit",
            "6",
        ]
    )
    assert code == 0
    return Workspace.at(root)


def test_ablate_writes_one_row_per_setting_and_reuses_the_base(ablated, capsys):
    results = read_frame(ablated, "ablation_results")
    whole = results[results["qtype"] == "*"]
    assert sorted(whole["setting"]) == ["follow_up_0", "full", "no_hierarchy", "saber_raw"]
    assert (whole["n"] == 6).all() and whole["offline"].all()
    assert whole["pass_at_k"].isna().all()  # offline answers: Pass@k does not apply
    assert whole["overall"].notna().all() and whole["evidence_recall"].notna().all()
    # The raw-SABER variant rebuilt only break_cycles and the stages after it.
    variant = ablated.root / "variants" / "saber_raw"
    assert variant.is_dir() and not (ablated.root / "variants" / "full").exists()
    rows = read_frame(ablated, "episode_relations")
    raw_rows = read_frame(type(ablated).at(variant), "episode_relations")
    # Raw keeps every progression edge, cycles and all; contrasts are never progression (auxiliary).
    contrasts = raw_rows["relation_type"] == "contrasts"
    assert (raw_rows[~contrasts]["status"] == "kept").all()
    assert (raw_rows[contrasts]["status"] == "auxiliary").all()
    assert len(raw_rows[~contrasts]) >= len(rows[rows["status"] == "kept"])
    same = read_frame(type(ablated).at(variant), "entities")
    assert (
        same.sort_values("entity_id")
        .reset_index(drop=True)
        .equals(read_frame(ablated, "entities").sort_values("entity_id").reset_index(drop=True))
    )


def _eval(root, questions, *flags: str) -> int:
    return main(
        ["eval", "-w", str(root), "--questions", str(questions), "--embeddings", "hashing", "--no-prefect"]
        + list(flags)
    )


def _colored_share(png: bytes) -> float:
    """The share of pixels in colour (bars), not white, grey or black (axes, text, grid)."""
    pixels = plt.imread(io.BytesIO(png))[..., :3]
    return float(((pixels.max(axis=2) - pixels.min(axis=2)) > 0.25).mean())


def test_report_tells_runs_apart_and_renders(ablated, tmp_path, capsys):
    # Two runs on the same questions file (another question budget), and one that lost answers:
    # its file asks about a document the workspace does not hold.
    assert _eval(ablated.root, QUESTIONS, "--limit", "3") == 0
    assert _eval(ablated.root, QUESTIONS, "--limit", "5") == 0
    lossy = tmp_path / "lossy.questions.jsonl"
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()[:2]
    missing = json.loads(lines[0]) | {"qid": "q-missing", "doc_id": "not_in_this_workspace"}
    lossy.write_text("\n".join(lines + [json.dumps(missing)]) + "\n", encoding="utf-8")
    assert _eval(ablated.root, lossy) == 1
    capsys.readouterr()

    out = tmp_path / "out"
    assert main(["report", "-w", str(ablated.root), "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    page = out / "report.html"
    assert result["out"] == str(page) and result["incomplete_runs"] == 1
    text = page.read_text(encoding="utf-8")
    assert "src='http" not in text and 'src="http' not in text and "<script" not in text

    dom = dump_dom(page, workdir=tmp_path)
    runs = re.findall(r'<tr class="run (complete|incomplete)">(.*?)</tr>', dom, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for _, row in runs]
    labels = [re.sub(r"<.*", "", c[0], flags=re.S) for c in cells]
    # 4 ablation settings (saber_raw answered over its build variant) + 3 eval runs, each its own row.
    assert len(runs) == 7 and len(set(labels)) == 7
    # Each label says what the run is: system · benchmark · settings · model · start.
    parts = [label.split(" · ") for label in labels]
    assert all(
        len(p) == 5 and p[3] == "offline" and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d", p[4]) for p in parts
    )
    limits = [re.search(r"limit (\d+)", p[2]).group(1) if "limit" in p[2] else "none" for p in parts]
    assert sorted(limits) == ["3", "5", "6", "6", "6", "6", "none"]
    assert {p[1] for p in parts} == {"the_lighthouse_key", "lossy"}  # two benchmarks: both named
    same_file = [c for c in cells if "the_lighthouse_key.questions.jsonl" in c[2]]
    assert len(same_file) == 6 and len({re.search(r"sha256 (\w+)", c[2]).group(1) for c in same_file}) == 1
    assert any("saber_raw" in c[0] and "break_cycles.mode=raw" in c[4] for c in cells)
    status = {limit: state for limit, (state, _) in zip(limits, runs)}
    assert status["3"] == "complete" and status["none"] == "incomplete"
    assert "2 of 3 answers" in dom
    # The scores table: one row per run, labelled as in the runs table; figures rounded.
    systems = dom[dom.index('<table class="systems">') :].split("</table>")[0]
    assert sorted(re.findall(r"<tr><td>([^<]+)</td>", systems)) == sorted(labels)
    assert not re.search(r"\d\.\d{4}", dom.split("<h2")[2])  # no four-decimal figures
    # The build variant is in the ablation table and has its own bars and rows everywhere.
    for section in ("qtypes", "tools", "latency"):
        table = dom[dom.index(f'<table class="{section}">') :].split("</table>")[0]
        assert " · saber_raw, limit 6 · " in table, section

    charts = re.findall(r'<img class="chart" alt="([^"]+)" src="data:image/png;base64,([^"]+)"', dom)
    assert len(charts) >= 5
    for title, data in charts:
        assert _colored_share(base64.b64decode(data)) > 0.01, f"blank chart: {title}"
    shot = screenshot(page, tmp_path / "report.png", width=1280, height=2400)
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1280, 2400) and distinct > 20
    assert _colored_share(shot) > 0.02  # the bars reach the rendered page


def test_report_without_runs_is_one_clear_line(sample_workspace, tmp_path, capsys):
    from tasks.tables.io import Workspace

    empty = Workspace.at(tmp_path / "ws")
    shutil.copytree(sample_workspace.root / "tables" / "documents", empty.tables_dir / "documents")
    code = main(["report", "-w", str(empty.root), "--out", str(tmp_path / "r.html")])
    assert code == 2 and "no evaluation runs" in capsys.readouterr().err


def test_ablate_runs_as_a_prefect_flow(ablated, prefect_harness):
    """The same grid through Prefect: a variant task, then the settings as concurrent task runs."""
    from flows.ablate_flow import run_ablation
    from schemas.config import load_settings

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    report = run_ablation(
        ablated,
        [QUESTIONS],
        settings,
        ["full", "no_graph_tools", "saber_heuristic"],
        limit=2,
        use_prefect=True,
    )
    whole = report.rows[report.rows["qtype"] == "*"]
    assert (
        sorted(whole["setting"]) == ["full", "no_graph_tools", "saber_heuristic"] and (whole["n"] == 2).all()
    )
    assert report.variants["saber_heuristic"]["stages_reused"] > 0
    stored = read_frame(ablated, "ablation_results", report.ablation_id)
    assert len(stored) == len(report.rows)


def test_a_setting_equal_to_full_is_answered_once(ablated):
    """follow_up_2 and saber_saber are the default full system: one run, never two at once under one id."""
    from flows.ablate_flow import run_ablation
    from schemas.config import load_settings

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    names = ["full", "follow_up_2", "saber_saber", "follow_up_1"]
    stream = io.StringIO()
    meter = Meter("settings x questions", stream=stream, console=Console(file=stream, force_terminal=False))
    report = run_ablation(ablated, [QUESTIONS], settings, names, limit=2, use_prefect=False, progress=meter)
    # Progress counts the settings answered (two: the others are the same run) x 2 questions.
    assert stream.getvalue().splitlines()[-1].startswith("[settings x questions 4/4] follow_up_1 (")
    whole = report.rows[report.rows["qtype"] == "*"].set_index("setting")
    assert list(whole.index) == names
    runs = whole["run_id"]
    assert runs["follow_up_2"] == runs["full"] == runs["saber_saber"] != runs["follow_up_1"]
    assert any("follow_up_2 is the same configuration as full" in note for note in report.notes)


def test_a_rerun_keeps_variants_built_from_the_same_base(ablated):
    from flows.ablate_flow import run_ablation
    from schemas.config import load_settings

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    report = run_ablation(ablated, [QUESTIONS], settings, ["saber_raw"], limit=1, use_prefect=False)
    stats = report.variants["saber_raw"]
    assert stats["stages_built"] == 0 and stats["linked_files"] == 0 and stats["stages_reused"] > 0
