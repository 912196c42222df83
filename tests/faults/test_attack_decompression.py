"""Attack family "decompression": a server whose reply is small on the wire and huge once read — a
gzip, deflate (zlib-wrapped or raw) or stacked gzip bomb of 4 GiB, a plain body declared 4 GiB, a
chunked or unlabelled body without end, an encoding never asked for. On the LLM reply path, the
embeddings path, the local server probe and `nkw llm check`, each ends in one line within seconds,
with Python's allocations staying far below the bomb (tasks.llm.client.bounded_reply)."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib

import httpx
import pytest

from schemas.config import LLMSettings
from schemas.responses.base import LLMCheckReply
from tasks.embeddings import EmbeddingServerError, HttpEmbedder
from tasks.llm.client.bounded_reply import BoundedTransport, ReplyTooLarge, UnsupportedEncoding
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest
from tasks.llm.local.server import models_reply
from tests.faults.attack_kit import nkw_in_process
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reply_bombs import BOMB_KINDS

PEAK_LIMIT = 96 * 1024 * 1024  # the largest reply accepted (16 MiB) and its JSON parse, with room
SECONDS = 10.0
CHECK = LLMRequest(
    stage="llm_check",
    item_id="attack",
    doc_id=None,
    prompt_id="llm_check/v1",
    prompt_hash="",
    max_tokens=64,
    messages=({"role": "user", "content": 'Reply with {"ok": true, "echo": "nkw"}.'},),
)


def _bounded(call):
    """`call()`'s result, the peak of Python's allocations meanwhile, and the seconds it took."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, peak, time.monotonic() - started


@pytest.mark.parametrize("kind", BOMB_KINDS)
def test_an_llm_reply_bomb_fails_the_request_in_one_line_with_bounded_memory(kind):
    with FakeOpenAIServer(model_names=[TEST_MODEL]) as server:
        settings = LLMSettings(url=server.url, model=TEST_MODEL, max_retries=0, timeout_s=30, deadline_s=30)
        server.queue_faults(kind)
        with OpenAICompatibleClient(settings) as client:
            result, peak, seconds = _bounded(lambda: client.structured(CHECK, LLMCheckReply))
        assert result.value is None and result.status == "error", result
        assert "larger than" in result.error or "encoding not decoded" in result.error, result.error
        assert len(result.error.splitlines()) == 1
        assert peak < PEAK_LIMIT and seconds < SECONDS, (peak, seconds)
        # the next reply is read as usual: the bound is per reply, not a broken client
        with OpenAICompatibleClient(settings) as client:
            assert client.structured(CHECK, LLMCheckReply).value is not None


@pytest.mark.parametrize(
    "kind", ["gzip_bomb", "deflate_bomb", "stacked_bomb", "huge_body", "endless_chunked"]
)
def test_an_embeddings_reply_bomb_is_one_line_with_bounded_memory(kind):
    with FakeOpenAIServer(model_names=["embedder"], bomb=kind) as server:
        embedder = HttpEmbedder(server.url, "embedder", batch_size=8, timeout_s=30)
        with pytest.raises(EmbeddingServerError) as caught:
            embedder.embed(["a line"] * 3)
        assert "larger than" in str(caught.value) and len(str(caught.value).splitlines()) == 1
    with FakeOpenAIServer(model_names=["embedder"]) as server:  # the same client reads a normal reply
        assert HttpEmbedder(server.url, "embedder").embed(["a", "b"]).shape == (2, server.embedding_dim)


def test_embeddings_stay_bounded_in_memory():
    with FakeOpenAIServer(model_names=["embedder"], bomb="gzip_bomb") as server:
        embedder = HttpEmbedder(server.url, "embedder", batch_size=64, timeout_s=30)

        def embed() -> None:
            with pytest.raises(EmbeddingServerError):
                embedder.embed(["a line"])

        _, peak, seconds = _bounded(embed)
    assert peak < PEAK_LIMIT and seconds < SECONDS, (peak, seconds)


@pytest.mark.parametrize("kind", ["gzip_bomb", "endless_close"])
def test_the_local_server_probe_reads_a_bomb_as_not_ready(kind):
    with FakeOpenAIServer(bomb=kind) as server:
        reply, peak, seconds = _bounded(lambda: models_reply(server.url, timeout_s=10))
    assert reply is None and peak < PEAK_LIMIT and seconds < SECONDS, (peak, seconds)


@pytest.mark.parametrize("kind", ["gzip_bomb", "deflate_bomb", "endless_chunked"])
def test_nkw_llm_check_names_a_bomb_in_one_line(kind, capsys):
    with FakeOpenAIServer(model_names=[TEST_MODEL], bomb=kind) as server:
        args = ["llm", "check", "--llm-url", server.url, "--model", TEST_MODEL]
        result = nkw_in_process(capsys, *args, seconds=30)
    result.clean_failure()
    assert "larger than" in result.err


# The transport on its own: what it decodes must equal what was sent, in every encoding it accepts.
REPLY = json.dumps({"text": "Mara found the brass key. " * 2000}).encode()


def _client(body: bytes, encoding: str | None, max_bytes: int = 1 << 20, **headers: str) -> httpx.Client:
    def answer(_: httpx.Request) -> httpx.Response:
        sent = {"content-encoding": encoding} if encoding else {}
        return httpx.Response(200, headers={**sent, **headers}, stream=httpx.ByteStream(body))

    return httpx.Client(transport=BoundedTransport(httpx.MockTransport(answer), max_bytes))


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    "body, encoding",
    [
        (REPLY, None),
        (REPLY, "identity"),
        (gzip.compress(REPLY), "gzip"),
        (gzip.compress(REPLY[:5000]) + gzip.compress(REPLY[5000:]), "gzip"),  # two gzip members
        (zlib.compress(REPLY), "deflate"),
        (_raw_deflate(REPLY), "deflate"),
        (zlib.compress(gzip.compress(REPLY)), "gzip, deflate"),
    ],
)
def test_a_normal_reply_decodes_to_what_was_sent(body, encoding):
    with _client(body, encoding) as client:
        reply = client.get("http://server/v1/models")
    assert reply.content == REPLY and reply.json()["text"].startswith("Mara")


@pytest.mark.parametrize(
    "body, encoding, error",
    [
        (gzip.compress(b"a" * (2 << 20)), "gzip", ReplyTooLarge),
        (b"a" * (2 << 20), None, ReplyTooLarge),
        (b"anything", "br", UnsupportedEncoding),
        (b"anything", "gzip, gzip, gzip", UnsupportedEncoding),
        (b"not gzip at all", "gzip", httpx.DecodingError),
    ],
)
def test_a_reply_past_the_bound_or_undecodable_is_refused(body, encoding, error):
    with _client(body, encoding) as client, pytest.raises(error):
        client.get("http://server/v1/models")


def test_the_client_asks_only_for_encodings_it_bounds():
    seen = {}

    def answer(request: httpx.Request) -> httpx.Response:
        seen.update(request.headers)
        return httpx.Response(200, content=b"{}")

    with httpx.Client(transport=BoundedTransport(httpx.MockTransport(answer), 100)) as client:
        client.get("http://server/")
    assert seen["accept-encoding"] == "gzip, deflate"
