"""`nkw serve`: a local HTTP API over one workspace, with the embedding model and every bundle
loaded once and shared by all requests.

POST /ask answers one question (the same JSON as `nkw ask --json`), GET /documents lists the
built documents, GET /health reports readiness; `/` lists the documents for people, each linked to
its view at `/view/<doc_id>`, and `/docs` describes the API (flows.serving.pages). Answers run in
worker threads, at most `concurrency` at a time; when `queue` more are already waiting the request
is refused with 503 instead of piling up. Bad input is a 4xx with one readable `detail` line.
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from flows.answer_questions import SYSTEMS, QueryEngine, warm_up
from flows.serving.pages import add_pages
from schemas.config import Settings
from tasks.query.store.doc_index import DocumentNotBuilt
from tasks.tables.io import Workspace, read_frame

MAX_QUESTION_CHARS = 2000
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 500


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="the question, in words")
    doc: str | None = Field(
        default=None, description="document id; optional when the workspace holds one document"
    )
    options: list[str] | None = Field(
        default=None, max_length=MAX_OPTIONS, description="multiple-choice options (two or more), or none"
    )
    system: Literal["nkw", "hybrid", "hybrid_fine"] = Field(default="nkw", description="answering system")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        return value.strip()

    @field_validator("options")
    @classmethod
    def _options(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        cleaned = [o.strip() for o in value]
        if len(cleaned) == 1:
            raise ValueError("give at least two options, or none")
        if any(not o or len(o) > MAX_OPTION_CHARS for o in cleaned):
            raise ValueError(f"every option must be 1-{MAX_OPTION_CHARS} characters")
        return cleaned or None


class Gate:
    """At most `concurrency` answers at once and at most `queue` waiting; beyond that, refuse."""

    def __init__(self, concurrency: int, queue: int) -> None:
        self.slots = threading.BoundedSemaphore(max(1, concurrency))
        self.limit = max(1, concurrency) + max(0, queue)
        self.lock = threading.Lock()
        self.active = 0

    def enter(self) -> bool:
        with self.lock:
            if self.active >= self.limit:
                return False
            self.active += 1
        return True

    def leave(self) -> None:
        with self.lock:
            self.active -= 1


def list_documents(workspace: Workspace) -> list[dict[str, Any]]:
    frame = read_frame(workspace, "documents", columns=["doc_id", "title", "language", "kind"])
    return frame.sort_values("doc_id").to_dict("records") if len(frame) else []


def create_app(
    workspace: Workspace,
    settings: Settings,
    engine: QueryEngine | None = None,
    *,
    concurrency: int = 2,
    queue: int = 16,
    preload: bool = True,
) -> FastAPI:
    """The API app; documents (and the embedder) load at startup when `preload`, else on first use."""
    engine = engine or QueryEngine(workspace, settings)
    gate = Gate(concurrency, queue)
    load_lock = threading.Lock()  # the engine's caches are filled by one thread at a time
    state: dict[str, Any] = {"documents": list_documents(workspace), "loaded": set()}
    if preload:  # a server keeps every document it loads at startup (an evaluation keeps the last few)
        engine.max_open_documents = max(engine.max_open_documents, len(state["documents"]))

    def ensure_loaded(doc_id: str) -> None:
        if doc_id in state["loaded"]:
            return
        with load_lock:
            if doc_id not in state["loaded"]:
                warm_up(engine, doc_id)
                state["loaded"].add(doc_id)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        if preload:
            for document in state["documents"]:
                await run_in_threadpool(ensure_loaded, document["doc_id"])
        yield

    # FastAPI's /docs and /redoc load their scripts from a CDN: flows.serving.pages serves its own.
    app = FastAPI(
        title="NKW",
        description="Questions over narrative knowledge bundles",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    add_pages(app, workspace, lambda: state["documents"])

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for error in exc.errors():
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        return JSONResponse(status_code=422, content={"detail": "; ".join(problems) or "invalid request"})

    @app.get("/health")
    def health() -> dict[str, Any]:
        """Readiness: how many documents, which are loaded, the concurrency, and whether answers are
        offline (no LLM configured)."""
        return {
            "status": "ok",
            "workspace": workspace.root.name,
            "documents": len(state["documents"]),
            "loaded": sorted(state["loaded"]),
            "concurrency": max(1, concurrency),
            "offline": engine.llm is None,
        }

    @app.get("/documents")
    def documents() -> list[dict[str, Any]]:
        """The built documents: doc_id, title, language, kind, and whether the bundle is loaded."""
        return [{**d, "loaded": d["doc_id"] in state["loaded"]} for d in state["documents"]]

    def answer(request: AskRequest, doc_id: str) -> dict[str, Any]:
        with gate.slots:
            ensure_loaded(doc_id)
            return engine.ask(doc_id, request.question, request.options, request.system).to_json()

    @app.post("/ask")
    async def ask(request: AskRequest) -> dict[str, Any]:
        """Answer one question about one document: the JSON `nkw ask --json` prints (answer, cited
        sections, evidence, notes). 503 when too many questions are waiting."""
        known = {d["doc_id"] for d in state["documents"]}
        doc_id = request.doc
        if doc_id is None:
            if len(known) != 1:
                raise HTTPException(
                    400, 'this workspace holds several documents; give "doc" (see GET /documents)'
                )
            doc_id = next(iter(known))
        if doc_id not in known:
            raise HTTPException(404, f"document {doc_id!r} is not in this workspace (see GET /documents)")
        if request.system not in SYSTEMS:  # pragma: no cover - the model's Literal already refuses it
            raise HTTPException(422, f"unknown system {request.system!r}")
        if not gate.enter():
            raise HTTPException(503, "busy: too many questions waiting; retry shortly")
        try:
            return await run_in_threadpool(answer, request, doc_id)
        except DocumentNotBuilt as exc:
            raise HTTPException(404, str(exc)) from None
        finally:
            gate.leave()

    return app
