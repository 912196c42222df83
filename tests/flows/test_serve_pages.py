"""`nkw serve`'s pages for people, in-process: `/` lists the documents with links to their views,
`/view/<doc_id>` is the page `nkw view` writes, `/docs` describes every endpoint with nothing loaded
from another site; and the access log's one sanitized line per request."""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from fastapi.testclient import TestClient

from flows.serving.console import AccessLog, access_line, url_of
from flows.serving.pages import endpoints
from flows.serving.serve import create_app
from schemas.config import load_settings
from tasks.views.bundle import load_bundle
from tasks.views.html import render_page

# Anything the browser would fetch from elsewhere: src/href to http(s) or protocol-relative URLs,
# CSS imports and url(...) pointing off the server.
EXTERNAL = re.compile(
    r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|@import|url\(\s*["']?(?:https?:)?//""", re.I
)


@pytest.fixture(scope="module")
def client(sample_workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    with TestClient(create_app(sample_workspace, settings, preload=False)) as client:
        yield client


def test_the_front_page_lists_every_document_with_a_link_to_its_view(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for doc_id, title in [
        ("the_fisherman_and_his_wife", "The Fisherman and His Wife"),
        ("the_lighthouse_key", "The Lighthouse Key"),
    ]:
        assert f'<a href="/view/{doc_id}">{doc_id}</a>' in page.text and title in page.text
    assert 'href="/docs"' in page.text and not EXTERNAL.search(page.text)


def test_a_view_is_the_page_nkw_view_writes_and_an_unknown_one_is_404(client, sample_workspace):
    page = client.get("/view/the_lighthouse_key")
    assert page.status_code == 200
    assert page.text == render_page(load_bundle(sample_workspace, "the_lighthouse_key"))
    missing = client.get("/view/no_such_document")
    assert missing.status_code == 404 and "not in this workspace" in missing.json()["detail"]


def test_the_api_docs_need_no_network_and_name_every_endpoint(client):
    docs = client.get("/docs")
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    assert not EXTERNAL.search(docs.text) and "<script" not in docs.text
    for method, path in [("GET", "/health"), ("GET", "/documents"), ("POST", "/ask")]:
        assert f'<span class="method">{method}</span> {path}</h2>' in docs.text
    for field in ("question", "doc", "options", "system"):
        assert f"<code>{field}</code>" in docs.text
    assert client.get("/redoc").status_code == 404  # FastAPI's would load its script from a CDN
    assert client.get("/openapi.json").json()["paths"].keys() == {"/health", "/documents", "/ask"}


def test_endpoints_read_fields_limits_and_replies_from_the_schema(client):
    found = {(e["method"], e["path"]): e for e in endpoints(client.get("/openapi.json").json())}
    ask = found[("POST", "/ask")]
    fields = {f["name"]: f for f in ask["fields"]}
    assert ask["body"] == "AskRequest" and fields["question"]["required"] == "yes"
    assert "at most 2000 characters" in fields["question"]["limits"]
    assert fields["system"]["type"] == '"nkw" | "hybrid" | "hybrid_fine"'
    assert {r["status"] for r in ask["responses"]} == {"200", "422"}


def test_an_access_line_is_one_safe_line():
    assert access_line("GET", "/documents", 200, 0.0034) == "GET /documents 200 3 ms"
    assert access_line("GET", "/\x1b[2J\nx", 404, 0) == "GET /\\x1b[2J\\x0ax 404 0 ms"
    assert access_line("POST", "/ask", None, 1.5) == "POST /ask - 1500 ms"
    assert url_of("::1", 8765) == "http://[::1]:8765/" and url_of("127.0.0.1", 80) == "http://127.0.0.1:80/"


def test_the_access_log_writes_a_line_per_request_even_when_the_app_fails():
    async def app(scope, receive, send):
        if scope["path"] == "/boom":
            raise RuntimeError("boom")
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message):
        pass

    stream = io.StringIO()
    logged = AccessLog(app, stream)
    asyncio.run(logged({"type": "http", "method": "GET", "path": "/ok"}, None, send))
    with pytest.raises(RuntimeError):
        asyncio.run(logged({"type": "http", "method": "POST", "path": "/boom"}, None, send))
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(" ", 2)[0] for line in lines] == ["GET /ok 204", "POST /boom 500"]
