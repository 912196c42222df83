"""Acceptance checks on the shared STAGE, FairytaleQA and QuALITY development sets."""

from __future__ import annotations

import json

from tests.dev.conftest import BENCHMARKS, nkw


def _documents(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_stage_scenes_match_the_release_titles(dev_workspace, shared_data):
    workspace, _ = dev_workspace
    for document in _documents(shared_data / "stage" / "documents.jsonl"):
        process, _ = nkw(
            "sql",
            "--workspace",
            str(workspace),
            "--format",
            "json",
            f"SELECT heading FROM sections WHERE doc_id = '{document['doc_id']}' ORDER BY ordinal",
        )
        headings = [row["heading"] for row in json.loads(process.stdout)]
        assert headings == document["meta"]["scene_titles"], document["doc_id"]


def test_fairytale_sections_match_the_given_sections(dev_workspace, shared_data):
    workspace, _ = dev_workspace
    process, _ = nkw(
        "sql",
        "--workspace",
        str(workspace),
        "--format",
        "json",
        "SELECT doc_id, count(*) AS n FROM sections GROUP BY doc_id",
    )
    counts = {row["doc_id"]: row["n"] for row in json.loads(process.stdout)}
    for document in _documents(shared_data / "fairytaleqa" / "documents.jsonl"):
        assert counts[document["doc_id"]] == document["meta"]["num_sections"], document["doc_id"]


def test_second_build_skips_everything_quickly(dev_workspace, shared_data):
    workspace, timings = dev_workspace
    process, seconds = nkw(
        "build", str(shared_data / "stage" / "documents.jsonl"), "--workspace", str(workspace), "--json"
    )
    report = json.loads(process.stdout)
    assert report["built"] == 0 and report["failed"] == 0 and report["skipped"] > 0
    assert report["used_prefect"] is False
    print(f"STAGE first build {timings['stage']:.1f} s, no-op rebuild {seconds:.2f} s")
    assert seconds < 0.10 * timings["stage"]


def test_eval_runs_on_every_dev_set(dev_workspace, shared_data):
    workspace, _ = dev_workspace
    for name in BENCHMARKS:
        process, _ = nkw(
            "eval",
            "--workspace",
            str(workspace),
            "--questions",
            str(shared_data / name / "questions.jsonl"),
            "--json",
        )
        assert process.returncode == 0, process.stderr[-2000:]
        report = json.loads(process.stdout)
        n_questions = len((shared_data / name / "questions.jsonl").read_text(encoding="utf-8").splitlines())
        assert report["n_questions"] == n_questions and not report["skipped_documents"]
        metrics = report["metrics"]
        print(name, json.dumps(metrics))
        gold = report["gold_mapping"]
        shown = {k: gold[k] for k in ("with_gold", "unmapped", "by_language")}
        print(name, "gold mapping", json.dumps(shown))
        if name == "stage":  # every gold scene of STAGE dev maps to a section; recall per language
            assert gold["with_gold"] > 0 and gold["unmapped"] == 0
            assert {"en", "zh"} <= set(gold["by_language"])
            assert all(v["evidence_recall"] is not None for v in gold["by_language"].values())
        if name == "quality":
            assert metrics["mcq_accuracy"] is not None and metrics["evidence_recall"] is None
        else:
            assert metrics["evidence_recall"] is not None and metrics["rouge_l_f1"] is not None
        assert metrics["latency_ms_p50"] is not None and report["by_qtype"] or name == "quality"
