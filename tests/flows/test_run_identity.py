"""Run and ablation ids name what decides the answers, not where the model is served: a run
resumes after the server restarts on another port, but offline and LLM answers never share a run."""

from __future__ import annotations

from flows.evaluation.ablation import ablation_id_for
from flows.evaluation.evaluate import evaluation_run_id
from schemas.config import load_settings
from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


def _ids(llm: dict, evaluate: dict | None = None) -> tuple[str, str]:
    settings = load_settings(overrides={"llm": llm, "evaluate": evaluate or {}})
    return (
        evaluation_run_id(QUESTIONS, "nkw", settings, 3, 5),
        ablation_id_for([QUESTIONS], settings, ["full"], 3, 5, "nkw"),
    )


def test_ids_ignore_the_server_address_but_not_the_model_or_offline():
    one = _ids({"url": "http://127.0.0.1:8001/v1", "model": "m", "timeout_s": 5}, {"judge_url": "http://a/v1"})
    other = _ids({"url": "http://127.0.0.1:9002/v1", "model": "m", "timeout_s": 9}, {"judge_url": "http://b/v1"})
    assert one == other
    assert _ids({"url": "http://a/v1", "model": "n"}) != _ids({"url": "http://x/v1", "model": "m"})
    offline, served = _ids({"model": "m"}), _ids({"url": "http://127.0.0.1:8001/v1", "model": "m"})
    assert offline[0] != served[0] and offline[1] != served[1]
    judged_by_another_model = _ids({"url": "http://x/v1", "model": "m"}, {"judge_model": "j"})
    assert judged_by_another_model[0] == served[0] and judged_by_another_model[1] != served[1]
