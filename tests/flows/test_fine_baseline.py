"""The fine-window baseline (`hybrid_fine`) on the bundled samples: it spends the 450-word hybrid's
source-token budget, its evidence names chunks and sections as the hybrid's does, `nkw eval
--system hybrid_fine` writes its rows, and with an LLM it reads its windows with the final prompt."""

from __future__ import annotations

import json
import shutil

import numpy as np

from flows.answer_questions import SYSTEMS, QueryEngine
from flows.cli.main import SYSTEMS as CLI_SYSTEMS
from flows.cli.main import main
from schemas.config import load_settings
from tasks.llm.client.factory import build_llm_client
from tasks.query.hybrid.answer_fine import hybrid_budget
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SAMPLES
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reader_replies import is_final_answer, shaped

DOC = "the_lighthouse_key"
QUESTION = "Where does Tom hide the brass key after Margaret gives it to him?"


def test_the_budget_is_the_hybrids_top_k_tokens(sample_workspace, hashing_settings):
    engine = QueryEngine(sample_workspace, hashing_settings)
    hybrid = engine.ask(DOC, QUESTION, system="hybrid")
    fine = engine.ask(DOC, QUESTION, system="hybrid_fine")
    index = engine.index(DOC)
    vector = engine.embedder(index.embedding_model).embed([QUESTION])[0]
    budget = hybrid_budget(index, QUESTION, vector, hashing_settings.retrieval)
    assert budget == hybrid.evidence_tokens
    assert fine.trace[0]["arguments"]["budget_tokens"] == budget
    assert 0 < fine.evidence_tokens <= budget
    assert fine.system == "hybrid_fine" and fine.is_offline and fine.answer
    # Finer units: more of them, each pointing at a real chunk and its section.
    assert len(fine.evidence) > len(hybrid.evidence)
    chunks = engine.index(DOC).chunks.set_index("chunk_id")
    for item in fine.evidence:
        assert chunks.loc[item.chunk_id, "section_id"] == item.section_id
    assert {c.section_id for c in fine.citations} <= set(fine.evidence_section_ids)


def test_an_explicit_source_budget_binds_the_fine_windows_as_it_binds_nkw(sample_workspace):
    settings = load_settings(
        overrides={"embed_texts": {"backend": "hashing"}, "answer": {"source_token_budget": 60}}
    )
    fine = QueryEngine(sample_workspace, settings).ask(DOC, QUESTION, system="hybrid_fine")
    assert fine.trace[0]["arguments"]["budget_tokens"] == 60 and 0 < fine.evidence_tokens <= 60


def test_window_vectors_score_the_baseline_and_the_nkw_fill_alike(sample_workspace, hashing_settings):
    assert hashing_settings.retrieval.dense_window_score == "window"  # the default
    engine = QueryEngine(sample_workspace, hashing_settings)
    windows = engine.windows(DOC)
    assert windows.vectors is not None and windows.vectors.shape[0] == len(windows)
    embedder = engine.embedder(engine.index(DOC).embedding_model)
    assert np.allclose(windows.vectors[0], embedder.embed([windows.texts[0]])[0], atol=1e-5)
    # NKW's budget fill reads the session's windows, the same ones the baseline ranks.
    assert engine.tool_env(DOC, embedder.embed).fine_windows() is windows
    fine = engine.ask(DOC, QUESTION, system="hybrid_fine")
    nkw = engine.ask(DOC, QUESTION)
    assert fine.evidence and nkw.evidence
    # Scored by its best sentence instead, a window needs no vector of its own.
    by_sentence = load_settings(
        overrides={
            "embed_texts": {"backend": "hashing"},
            "retrieval": {"dense_window_score": "best_sentence"},
        }
    )
    assert QueryEngine(sample_workspace, by_sentence).windows(DOC).vectors is None


def test_eval_with_the_fine_baseline_writes_its_rows(sample_workspace, tmp_path, capsys):
    assert CLI_SYSTEMS == SYSTEMS  # the parser's choices are the engine's systems
    root = tmp_path / "ws"
    shutil.copytree(sample_workspace.root, root, ignore=shutil.ignore_patterns("variants"))
    code = main(
        [
            "eval",
            "-w",
            str(root),
            "--questions",
            str(SAMPLES / "the_lighthouse_key.questions.jsonl"),
            "--system",
            "hybrid_fine",
            "--no-prefect",
            "--json",
            "--embeddings",
            "hashing",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["n_questions"] == 10 and report["offline"] is True
    answers = read_frame(Workspace.at(root), "qa_answers")
    rows = answers[answers["run_id"] == report["run_id"]]
    assert len(rows) == 10 and set(rows["system"]) == {"hybrid_fine"}
    assert (rows["status"] == "answered").all() and rows["evidence_tokens"].gt(0).all()


def _final_reply(body):
    if is_final_answer(body):
        reply = {
            "answer": "In a tobacco tin in the glovebox of his van.",
            "chosen_option": None,
            "cited_ordinals": [],
            "quotes": [],
            "confidence": 0.7,
        }
        return shaped(body, reply)
    return None


def test_with_an_llm_the_fine_windows_are_the_passages_of_the_final_prompt(sample_workspace):
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=_final_reply) as server:
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {"url": server.url, "model": TEST_MODEL, "max_tokens": 256},
            }
        )
        llm = build_llm_client(settings.llm, None, None)
        fine = QueryEngine(sample_workspace, settings, llm=llm).ask(DOC, QUESTION, system="hybrid_fine")
        requests = server.chat_requests()
        assert len(requests) == 1 and not fine.is_offline and fine.system == "hybrid_fine"
        assert fine.answer.startswith("In a tobacco tin")
        assert fine.llm_calls and fine.llm_calls[0]["prompt_id"] == "final_answer/v2"
        assert fine.board["source_tokens"] == fine.evidence_tokens
        prompt = requests[0].body["messages"][-1]["content"]
        assert fine.evidence[0].text[:40] in prompt
        llm.close()
