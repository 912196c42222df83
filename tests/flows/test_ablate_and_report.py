"""`nkw ablate` over the bundled samples (a build-time variant reuses the base's unchanged stages)
and `nkw report` rendered in headless Chromium."""

from __future__ import annotations

import shutil

import pytest

from flows.cli.main import main
from tests.fixtures.browser import png_pixels, screenshot
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
    assert (raw_rows["status"] == "kept").all() and len(raw_rows) >= len(rows[rows["status"] == "kept"])
    same = read_frame(type(ablated).at(variant), "entities")
    assert (
        same.sort_values("entity_id")
        .reset_index(drop=True)
        .equals(read_frame(ablated, "entities").sort_values("entity_id").reset_index(drop=True))
    )


def test_report_is_one_self_contained_page_that_renders(ablated, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", "-w", str(ablated.root), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("data:image/png;base64,") >= 4
    assert "src='http" not in text and 'src="http' not in text and "<script" not in text
    for heading in (
        "Overall and Pass@k",
        "Ablations against the full system",
        "Tool use",
        "Latency and tokens",
    ):
        assert heading in text
    shot = screenshot(out, tmp_path / "shot.png", width=1200, height=1800)  # skips when Chromium is absent
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1200, 1800)
    assert distinct > 20  # text, tables and plots, not a blank page


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
    report = run_ablation(ablated, [QUESTIONS], settings, names, limit=2, use_prefect=False)
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
