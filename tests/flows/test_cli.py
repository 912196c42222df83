"""The `nkw` command line in-process: sql, inspect, ask, eval and error handling."""

from __future__ import annotations

import json
import os

from prefect.settings import Settings

from flows.cli.main import main, prefect_environment
from flows.cli.commands.common import IDLE_SERVICES
from flows.stages import STAGES
from tests.conftest import SAMPLES, STORY


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sql_formats_and_refusals(capsys, sample_workspace):
    ws = str(sample_workspace.root)
    code, out, _ = run(
        capsys,
        "sql",
        "-w",
        ws,
        "SELECT doc_id, count(*) AS n FROM sections GROUP BY doc_id ORDER BY doc_id",
        "--format",
        "json",
    )
    assert code == 0
    rows = json.loads(out)
    assert rows == [
        {"doc_id": "the_fisherman_and_his_wife", "n": rows[0]["n"]},
        {"doc_id": "the_lighthouse_key", "n": 17},
    ]
    code, out, _ = run(
        capsys,
        "sql",
        "-w",
        ws,
        "SELECT heading FROM sections WHERE ordinal = 2 AND doc_id = 'the_lighthouse_key'",
        "--format",
        "csv",
    )
    assert out.splitlines() == ["heading", "2 INT. HARBOUR OFFICE - NIGHT"]
    code, out, _ = run(capsys, "sql", "-w", ws, "SELECT 1 AS one")
    assert code == 0 and "(1 row)" in out
    code, _, err = run(capsys, "sql", "-w", ws, "DELETE FROM sections")
    assert code == 2 and err.startswith("error: refused") and err.count("\n") == 1
    code, _, err = run(capsys, "sql", "-w", ws, "SELEC nonsense")
    assert code == 2 and "syntax error" in err.lower()


def test_inspect_reports_rows_stages_and_failures(capsys, sample_workspace):
    code, out, _ = run(capsys, "inspect", "-w", str(sample_workspace.root), "--json")
    data = json.loads(out)
    assert code == 0 and data["tables"]["documents"] == 2
    assert data["rows_per_document"]["the_lighthouse_key"]["sections"] == 17
    assert data["stages"]["segment_sections"]["built"] == 2
    code, out, _ = run(capsys, "inspect", "-w", str(sample_workspace.root))
    assert "the_lighthouse_key" in out and "failures: 0" in out


def test_ask_cites_sections_and_labels_offline(capsys, sample_workspace):
    ws = str(sample_workspace.root)
    code, out, _ = run(
        capsys,
        "ask",
        "-w",
        ws,
        "--doc",
        "the_lighthouse_key",
        "Where does Tom hide the brass key?",
        "--trace",
    )
    assert code == 0 and "offline" in out and "Cited sections:" in out and "hybrid_evidence_search" in out
    code, out, _ = run(
        capsys,
        "ask",
        "-w",
        ws,
        "--doc",
        "the_fisherman_and_his_wife",
        "What did the fisherman catch?",
        "--option",
        "a golden ring",
        "--option",
        "a flounder",
        "--json",
    )
    answer = json.loads(out)
    assert (
        answer["chosen_option"] in (0, 1) and answer["options"][answer["chosen_option"]] == answer["answer"]
    )
    assert answer["is_offline"] is True and answer["citations"] and answer["citations"][0]["heading"]


def test_user_errors_are_one_line(capsys, tmp_path, sample_workspace):
    code, _, err = run(capsys, "ask", "-w", str(tmp_path / "nope"), "Who?")
    assert code == 2 and "no workspace" in err and "Traceback" not in err
    code, _, err = run(capsys, "ask", "-w", str(sample_workspace.root), "Who?")
    assert code == 2 and "--doc" in err
    code, _, err = run(capsys, "ask", "-w", str(sample_workspace.root), "--doc", "missing", "Who?")
    assert code == 2 and "not in workspace" in err
    code, _, err = run(capsys, "build", str(tmp_path / "missing.txt"), "-w", str(tmp_path / "ws"))
    assert code == 2 and "no such file" in err
    code, _, err = run(
        capsys, "eval", "-w", str(sample_workspace.root), "--questions", str(tmp_path / "q.jsonl")
    )
    assert code == 2 and "questions file not found" in err
    bad = tmp_path / "bad.toml"
    bad.write_text("[split_chunks]\nchunk_tokens = 'many'\n")
    code, _, err = run(capsys, "build", str(STORY), "-w", str(tmp_path / "ws"), "--config", str(bad))
    assert code == 2 and "invalid configuration" in err


def test_build_and_eval_without_prefect(capsys, tmp_path):
    ws = str(tmp_path / "ws")
    code, out, _ = run(
        capsys,
        "build",
        str(SAMPLES / "the_lighthouse_key.txt"),
        "-w",
        ws,
        "--embeddings",
        "hashing",
        "--no-prefect",
        "--json",
    )
    assert code == 0 and json.loads(out)["built"] == len(STAGES)
    code, out, _ = run(
        capsys,
        "build",
        str(SAMPLES / "the_lighthouse_key.txt"),
        "-w",
        ws,
        "--embeddings",
        "hashing",
        "--no-prefect",
    )
    assert "every stage up to date" in out
    code, out, err = run(
        capsys,
        "eval",
        "-w",
        ws,
        "--questions",
        str(SAMPLES / "the_lighthouse_key.questions.jsonl"),
        "--no-prefect",
        "--json",
        "--embeddings",
        "hashing",
    )
    report = json.loads(out)
    assert code == 0 and report["n_questions"] == 10 and report["offline"] is True
    # Progress off a terminal: plain lines counting the questions, the last one at 10 of 10.
    progress = [line for line in err.splitlines() if line.startswith("[questions ")]
    assert progress and progress[-1].startswith("[questions 10/10] the_lighthouse_key (")
    assert len(progress) == 10 and "ETA" in progress[0]
    assert set(report["metrics"]) == {
        "evidence_recall",
        "mcq_accuracy",
        "rouge_1_f1",
        "rouge_2_f1",
        "rouge_l_f1",
        "latency_ms_p50",
        "latency_ms_p95",
    }
    assert (
        0.0 <= report["metrics"]["evidence_recall"] <= 1.0 and report["metrics"]["mcq_accuracy"] is not None
    )
    assert len(report["by_qtype"]) == 6
    gold = report["gold_mapping"]
    assert gold["with_gold"] == 10 and gold["unmapped"] == 0 and gold["unmapped_questions"] == []
    assert gold["by_language"]["en"]["evidence_recall"] == report["metrics"]["evidence_recall"]


def test_prefect_home_exists_before_a_server_starts(tmp_path, monkeypatch):
    home = tmp_path / "not-yet" / "prefect"
    monkeypatch.setenv("PREFECT_HOME", str(home))
    prefect_environment()
    assert home.is_dir()  # the temporary server's SQLite file needs its folder


def test_the_temporary_server_persists_events_in_batches_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE", raising=False)
    monkeypatch.delenv("PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE", raising=False)
    prefect_environment()
    assert os.environ["PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE"] == "100"
    # a batched task-run recorder logs a traceback for the runs it still holds when the server stops
    assert "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE" not in os.environ
    monkeypatch.setenv("PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE", "7")
    prefect_environment()
    assert os.environ["PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE"] == "7"


def test_the_temporary_server_runs_no_idle_services_unless_the_user_chose(monkeypatch):
    for service in IDLE_SERVICES:
        monkeypatch.delenv(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", raising=False)
    monkeypatch.setenv("PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED", "true")  # the user's choice stands
    prefect_environment()
    services = Settings().server.services
    assert services.scheduler.enabled is True
    assert not services.late_runs.enabled and not services.triggers.enabled and not services.foreman.enabled
    # what a build needs stays on: task runs and events are still recorded
    assert services.task_run_recorder.enabled and services.event_persister.enabled
