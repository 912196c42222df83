"""`nkw ablate` against the test server as answerer and judge, through Prefect: the flow gets the
servers as URLs and model names only, every setting yields its row, and Overall / Pass@k come from
the judge's votes."""

from __future__ import annotations

import shutil

import pytest

from flows.cli.main import main
from flows.inspection.report import load_report_data
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SAMPLES
from tests.fixtures.eval_llm import eval_responder
from tests.fixtures.openai_server import FakeOpenAIServer

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


@pytest.fixture
def servers():
    with (
        FakeOpenAIServer(model_names=("eval-model",), responder=eval_responder(0.25)) as answerer,
        FakeOpenAIServer(model_names=("judge-model",), responder=eval_responder(0.25)) as judge,
    ):
        yield answerer, judge


@pytest.mark.slow
def test_ablate_with_llm_answerer_and_judge(sample_workspace, servers, tmp_path, prefect_harness, capsys):
    answerer, judge = servers
    root = tmp_path / "ws"
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
            "--llm-url",
            answerer.url,
            "--model",
            "eval-model",
            "--judge-url",
            judge.url,
            "--judge-model",
            "judge-model",
            "--settings",
            "full,no_graph_tools,saber_raw",
            "--limit",
            "3",
            "--samples",
            "2",
            "--json",
        ]
    )
    assert code == 0, capsys.readouterr().err
    workspace = Workspace.at(root)
    results = read_frame(workspace, "ablation_results")
    whole = results[results["qtype"] == "*"]
    assert sorted(whole["setting"]) == ["full", "no_graph_tools", "saber_raw"]
    assert not whole["offline"].any() and (whole["n"] == 3).all() and (whole["samples"] == 2).all()
    assert whole["overall"].notna().all() and whole["pass_at_k"].notna().all()
    assert (whole["pass_at_k"] >= whole["overall"]).all() and (whole["llm_tokens_per_q"] > 0).all()
    for row in whole.to_dict("records"):  # a build-time variant's run tables live in its workspace
        where = workspace if row["workspace"] == "base" else Workspace.at(root / "variants" / row["setting"])
        votes = read_frame(where, "judgments", row["run_id"])
        assert set(votes["judge_model"]) == {"judge-model"} and set(votes["vote"]) == set(range(5))
    assert judge.chat_requests() and answerer.chat_requests()

    # The report reads the answering runs' llm_calls although its DuckDB connection opens no file.
    out = tmp_path / "report.html"
    assert main(["report", "-w", str(root), "--out", str(out)]) == 0, capsys.readouterr().err
    tokens = load_report_data(workspace).frames["latency"]  # the build variant's run included
    assert len(tokens) == 3 and (tokens["llm_tokens_per_question"] > 0).all()
