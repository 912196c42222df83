"""`[answer] llm_steps = "reader"`: the model answers and does nothing else, one request a question
(the question's reading, the skills and the follow-ups by the offline rules)."""

from __future__ import annotations

from flows.answer_questions import QueryEngine
from schemas.config import load_settings
from tasks.llm.client.factory import build_llm_client
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reader_replies import is_final_answer, schema_of, shaped

QUESTION = "Where does Tom hide the brass key after Margaret gives it to him?"
OPTIONS = ["In the lighthouse", "In a tobacco tin in the glovebox", "Under the harbour wall", "In his coat"]


def responder(body):
    if is_final_answer(body):
        user = body["messages"][-1]["content"]
        listed = [line[3:] for line in user.splitlines() if line[:3] in {"A. ", "B. ", "C. ", "D. "}]
        chosen = listed.index(OPTIONS[1]) if OPTIONS[1] in listed else None  # read by content, not letter
        reply = {"answer": "In the glovebox.", "chosen_option": chosen, "cited_ordinals": [], "quotes": [],
                 "confidence": 0.6}  # fmt: skip
        return shaped(body, reply, candidate=0)
    return None


def ask(workspace, llm_steps: str, options: list[str] | None) -> tuple[object, list[str]]:
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=responder) as server:
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {"url": server.url, "model": TEST_MODEL, "max_tokens": 256},
                "answer": {"llm_steps": llm_steps},
            }
        )
        llm = build_llm_client(settings.llm, None, None)
        try:
            answer = QueryEngine(workspace, settings, llm=llm).ask("the_lighthouse_key", QUESTION, options)
        finally:
            llm.close()
        sent = [
            schema_of(r.body)[0] or ("tools" if r.body.get("tools") else "text")
            for r in server.chat_requests()
        ]
    return answer, sent


def test_the_reader_alone_asks_once_a_question(sample_workspace) -> None:
    free, sent = ask(sample_workspace, "reader", None)
    assert len(sent) == 1 and sent[0].startswith("ReaderReplyCandidates")
    assert not free.is_offline and free.answer == "In the glovebox."
    assert any(row["round"] >= 1 for row in free.trace) or "stopped early" in free.notes[-1]  # offline rules
    choice, sent = ask(sample_workspace, "reader", OPTIONS)
    # no option audit either; asked again, options rotated, only if the offline pick differed
    assert sent in (["ReaderReplyOptions4"], ["ReaderReplyOptions4"] * 2)
    assert choice.chosen_option == 1 and not choice.is_offline


def test_the_agent_asks_for_every_step(sample_workspace) -> None:
    _, sent = ask(sample_workspace, "agent", None)
    assert len(sent) > 1 and "tools" in sent and sent[-1].startswith("ReaderReplyCandidates")
