"""With an LLM configured, the hybrid baseline answers with the same model and final-answer
prompt over its top-k chunks, and NKW's multiple-choice answers go through LLM option admission."""

from __future__ import annotations

from flows.answer_questions import QueryEngine
from schemas.config import load_settings
from tasks.llm.client.factory import build_llm_client
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reader_replies import is_final_answer, shaped

QUESTION = "Where does Tom hide the brass key after Margaret gives it to him?"
OPTIONS = ["In the lighthouse", "In a tobacco tin in the glovebox", "Under the harbour wall", "In his coat"]


def responder(body):
    if is_final_answer(body):
        listed = [line[3:] for line in body["messages"][-1]["content"].splitlines() if line[1:3] == ". "]
        reply = {
            "answer": "In a tobacco tin in the glovebox of his van.",
            "chosen_option": listed.index(OPTIONS[1]) if OPTIONS[1] in listed else None,  # read, not a letter
            "cited_ordinals": [],
            "quotes": [],
            "confidence": 0.7,
        }
        return shaped(body, reply)
    return None


def schema_name(request):
    return ((request.body.get("response_format") or {}).get("json_schema") or {}).get("name")


def test_hybrid_uses_the_llm_and_the_final_answer_prompt(sample_workspace):
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=responder) as server:
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {"url": server.url, "model": TEST_MODEL, "max_tokens": 256},
            }
        )
        llm = build_llm_client(settings.llm, None, None)
        engine = QueryEngine(sample_workspace, settings, llm=llm)
        hybrid = engine.ask("the_lighthouse_key", QUESTION, system="hybrid")
        requests = server.chat_requests()
        assert not hybrid.is_offline and hybrid.answer.startswith("In a tobacco tin")
        # A free question: the baseline's offline answer offered as the one candidate.
        assert [schema_name(r) for r in requests] == ["ReaderReplyCandidates1Chars70"]
        # The same final-answer prompt NKW uses, with the baseline's chunks as its passages.
        system_prompt = requests[0].body["messages"][0]["content"]
        assert "evidence packet" in system_prompt
        assert hybrid.llm_calls and hybrid.llm_calls[0]["prompt_id"] == "final_answer/v2"
        assert sum(e.n_tokens for e in hybrid.evidence) == hybrid.board["source_tokens"]

        server.reset()
        nkw = engine.ask("the_lighthouse_key", QUESTION, OPTIONS, system="nkw")
        names = [schema_name(r) for r in server.chat_requests()]
        assert "OptionAdmissionReply" in names and names.index("OptionAdmissionReply") < names.index(
            "ReaderReplyOptions4"
        )
        final = next(r for r in server.chat_requests() if schema_name(r) == "ReaderReplyOptions4")
        assert "Option audit" in final.body["messages"][-1]["content"]
        assert nkw.chosen_option == 1 and not nkw.is_offline
        # Equal evidence budget: NKW's source tokens never exceed the baseline's top-k chunk tokens.
        assert nkw.evidence_tokens <= hybrid.evidence_tokens
        llm.close()


def letter_responder(letter_index: int | None, text: str | None = None):
    """A reader that names the option at `letter_index`, or the option reading `text` wherever it is."""

    def respond(body):
        if not is_final_answer(body):
            return None
        listed = [line[3:] for line in body["messages"][-1]["content"].splitlines() if line[1:3] == ". "]
        chosen = listed.index(text) if text is not None else letter_index
        reply = {
            "answer": "-",
            "chosen_option": chosen,
            "cited_ordinals": [],
            "quotes": [],
            "confidence": 0.5,
        }
        return shaped(body, reply)

    return respond


def ask_hybrid(sample_workspace, respond):
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=respond) as server:
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {"url": server.url, "model": TEST_MODEL, "max_tokens": 256},
            }
        )
        llm = build_llm_client(settings.llm, None, None)
        try:
            answer = QueryEngine(sample_workspace, settings, llm=llm).ask(
                "the_lighthouse_key", QUESTION, OPTIONS, system="hybrid"
            )
        finally:
            llm.close()
        return answer, [schema_name(r) for r in server.chat_requests()]


def test_the_baselines_option_stands_only_when_named_again_with_the_options_rotated(sample_workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    offline = QueryEngine(sample_workspace, settings).ask(
        "the_lighthouse_key", QUESTION, OPTIONS, system="hybrid"
    )
    assert offline.is_offline and offline.chosen_option is not None
    other = (offline.chosen_option + 1) % len(OPTIONS)
    # A model that prefers a letter: rotated, that letter is another option, so the offline pick stays.
    biased, sent = ask_hybrid(sample_workspace, letter_responder(other))
    assert sent == ["ReaderReplyOptions4"] * 2
    assert biased.is_offline and biased.chosen_option == offline.chosen_option and biased.failures == []
    assert "did not stand with the options rotated" in biased.notes[0]
    # A model that reads the option's words names it under both letters: its pick stands.
    reader, sent = ask_hybrid(sample_workspace, letter_responder(None, OPTIONS[other]))
    assert sent == ["ReaderReplyOptions4"] * 2
    assert not reader.is_offline and reader.chosen_option == other and reader.answer == OPTIONS[other]
