"""The LLM response cache: key canonicalisation, what the key covers, atomic thread-safe files."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from schemas.responses.base import LLMCheckReply
from tasks.llm.client.cache import LLMCache, cache_key
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

MESSAGES = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "Rick walks in."}]
SAMPLING = {"temperature": 0.0, "max_tokens": 2048, "enable_thinking": False}
SCHEMA = LLMCheckReply.model_json_schema()


def test_cache_key_is_canonical_sha256() -> None:
    key = cache_key("m", MESSAGES, SAMPLING, SCHEMA)
    assert len(key) == 64 and int(key, 16) >= 0
    reordered = [dict(reversed(list(m.items()))) for m in MESSAGES]
    assert cache_key("m", tuple(reordered), dict(reversed(list(SAMPLING.items()))), dict(SCHEMA)) == key


@pytest.mark.parametrize(
    "change", ["model", "messages", "temperature", "max_tokens", "schema", "no_schema", "version"]
)
def test_cache_key_changes_with_what_was_asked(change: str) -> None:
    args = {
        "model": "m",
        "messages": MESSAGES,
        "sampling": SAMPLING,
        "response_schema": SCHEMA,
        "cache_version": "1",
    }
    base = cache_key(**args)
    if change == "model":
        args["model"] = "m2"
    elif change == "messages":
        args["messages"] = MESSAGES[:1] + [{"role": "user", "content": "Rick walks out."}]
    elif change in ("temperature", "max_tokens"):
        args["sampling"] = {**SAMPLING, change: SAMPLING[change] + 1}
    elif change == "schema":
        args["response_schema"] = {**SCHEMA, "required": ["ok"]}
    elif change == "no_schema":
        args["response_schema"] = None
    else:
        args["cache_version"] = "2"
    assert cache_key(**args) != base


def _request(text: str = "Rick walks in.", temperature: float | None = None) -> LLMRequest:
    return LLMRequest(
        stage="extract_graph",
        item_id="c1",
        doc_id="d1",
        prompt_id="extract_graph/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": text},),
        temperature=temperature,
    )


def test_client_call_key_ignores_url_key_and_timeouts(fake_llm_server: FakeOpenAIServer) -> None:
    def key(url: str, api_key: str | None, request: LLMRequest = _request(), **overrides: object) -> str:
        with OpenAICompatibleClient(fast_llm_settings(url, **overrides), api_key=api_key) as client:
            result = client.structured(request, LLMCheckReply)
        assert result.ok
        return result.call_key

    base = key(fake_llm_server.url, None)
    assert (
        key(
            fake_llm_server.root_url,
            "sk-other-key-123456",
            timeout_s=7.0,
            deadline_s=70.0,
            max_retries=0,
            backoff_s=3.0,
            concurrency=1,
        )
        == base
    )
    assert key(fake_llm_server.url, None, _request(temperature=0.5)) != base
    assert key(fake_llm_server.url, None, _request("Rick walks out.")) != base
    assert key(fake_llm_server.url, None, max_tokens=100) != base
    fake_llm_server.model_names.append("other-model")
    assert key(fake_llm_server.url, None, model="other-model") != base


def test_put_get_round_trip_and_layout(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path)
    key = cache_key("m", MESSAGES, SAMPLING, None)
    assert cache.get(key) is None and len(cache) == 0
    payload = {"content": '{"ok": true, "echo": "é"}', "usage": {"prompt_tokens": 3, "completion_tokens": 5}}
    cache.put(key, payload)
    assert cache.get(key) == payload
    assert (tmp_path / key[:2] / f"{key}.json").is_file() and len(cache) == 1
    assert [p.name for p in (tmp_path / key[:2]).iterdir()] == [f"{key}.json"]  # no temp files left


def test_unreadable_entries_are_misses(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path)
    key = "ab" + "0" * 62
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text("{truncated", encoding="utf-8")
    assert cache.get(key) is None
    cache.path(key).write_text("[1, 2]", encoding="utf-8")
    assert cache.get(key) is None


@pytest.mark.parametrize("bad", ["../../etc/passwd", "ABC", "a" * 63, "g" * 64])
def test_keys_must_be_sha256_hex(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        LLMCache(tmp_path).put(bad, {"content": "x"})


def test_failed_write_leaves_the_old_entry_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = LLMCache(tmp_path)
    key = cache_key("m", MESSAGES, SAMPLING, None)
    cache.put(key, {"content": "old"})

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        cache.put(key, {"content": "new"})
    monkeypatch.undo()
    assert cache.get(key) == {"content": "old"}
    assert len(list((tmp_path / key[:2]).iterdir())) == 1


def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path)
    shared = cache_key("shared", MESSAGES, SAMPLING, None)
    seen: list[dict | None] = []
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(20):
                cache.put(shared, {"content": f"writer {i}", "n": j})
                seen.append(cache.get(shared))
                cache.put(cache_key(f"m{i}", MESSAGES, SAMPLING, None), {"content": str(i)})
        except BaseException as exc:  # surfaced below: a thread's exception would otherwise vanish
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    # Every read saw a complete payload from some writer, never a partial file.
    assert all(p is not None and p["content"].startswith("writer ") for p in seen)
    assert len(cache) == 17
    assert json.loads(cache.path(shared).read_text(encoding="utf-8"))["content"].startswith("writer ")


def test_a_failing_cache_write_still_returns_the_value(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(self: LLMCache, key: str, payload: dict) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(LLMCache, "put", full_disk)
    with OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), cache=LLMCache(tmp_path)) as client:
        result = client.structured(_request(), LLMCheckReply)
    assert result.status == "ok" and isinstance(result.value, LLMCheckReply) and len(LLMCache(tmp_path)) == 0


def test_http_embedder_reads_an_openai_compatible_embeddings_endpoint(fake_llm_server):
    from schemas.config import EmbedTextsSettings
    from tasks.embeddings import HttpEmbedder, build_embedder, embedder_for_identity

    model = fake_llm_server.model_names[0]
    embedder = build_embedder(
        EmbedTextsSettings(backend="http", url=fake_llm_server.url, model=model, batch_size=2)
    )
    assert isinstance(embedder, HttpEmbedder) and embedder.name == f"http:{model}"
    vectors = embedder.embed(["one", "two", "three"])
    assert vectors.shape == (3, 8) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(embedder.embed(["two"])[0], vectors[1])  # deterministic, batch order kept
    assert fake_llm_server.counts["embeddings"] == 3  # batches of two, then one
    again = embedder_for_identity(
        f"http:{model}", EmbedTextsSettings(backend="http", url=fake_llm_server.url)
    )
    assert isinstance(again, HttpEmbedder) and again.model == model
