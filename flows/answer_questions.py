"""Answer questions over a built workspace. `QueryEngine` keeps loaded documents and the
query embedder for a session (one `nkw ask`, or a whole evaluation run). No Prefect here:
interactive commands never wait for a server."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable

from schemas.config import Settings
from tasks.embeddings import Embedder, embedder_for_identity
from tasks.llm.client.recorder import RecordingClient
from tasks.query.agent_loop import make_llm_planner, request_factory_for
from tasks.query.answer_global_llm import make_global_writer
from tasks.query.answer_nkw import answer_nkw, offline_planner
from tasks.query.answer_types import Answer
from tasks.query.decompose_llm import make_llm_decomposer
from tasks.query.hybrid.answer import answer_hybrid
from tasks.query.hybrid.answer_fine import answer_hybrid_fine
from tasks.query.hybrid.fine_windows import FineWindows, build_windows, with_vectors
from tasks.query.plan import decompose, shape_calls
from tasks.query.question_scope import answer_words
from tasks.query.reader.hybrid import answer_hybrid_llm
from tasks.query.reader.hybrid_fine import answer_hybrid_fine_llm
from tasks.query.reader.llm import make_llm_finalizer
from tasks.query.reader.option_audit import make_option_audit
from tasks.query.skills.cards import select_skills_llm
from tasks.query.store.doc_index import DocumentIndex
from tasks.query.store.document_store import NarrativeStore
from tasks.query.tools.env import ToolEnv
from tasks.tables.io import Workspace
from tasks.vector_store import caching

SYSTEMS = ("nkw", "hybrid", "hybrid_fine")
# Documents whose loaded state (index, store, windows, tool environment) a session keeps, the ones
# asked last. A loaded screenplay holds about 65 MB: a session over the 131-screenplay corpus that
# kept them all grew past 10 GB. An evaluation answers one document (two in parallel) at a time.
MAX_OPEN_DOCUMENTS = 8


class QueryEngine:
    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        embedder_factory: Callable[[str | None], Embedder | None] | None = None,
        llm: Any = None,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.llm = llm  # tasks.llm.client.LLMClient, or None for the offline path
        self.progress: Callable[[str], None] | None = None  # one line per document answered (long runs)
        self.on_answer: Callable[[int, str], None] | None = None  # (questions answered, note): progress
        self.journal: Any = None  # an AnswerJournal (flows.evaluation): every answer saved as it is produced
        # Set for Pass@k runs: every sample is drawn at this temperature with its own seed
        # (the sample number).
        self.sample_temperature: float | None = None
        self._indexes: dict[str, DocumentIndex] = {}
        self._stores: dict[str, NarrativeStore] = {}
        self._windows: dict[str, FineWindows] = {}
        self._embedders: dict[str | None, Embedder | None] = {}
        self._envs: dict[str, ToolEnv] = {}
        # Never fewer than the documents an evaluation answers at once, or they would evict each other.
        self.max_open_documents = max(MAX_OPEN_DOCUMENTS, 2 * settings.evaluate.document_concurrency)
        self._open: OrderedDict[str, None] = OrderedDict()  # loaded documents, the last asked last
        self._open_lock = threading.Lock()
        # Seconds spent loading, by part ("model": embedding model incl. torch, "bundle": tables and
        # indexes), so a command can report its start-up apart from answer time.
        self.load_seconds: dict[str, float] = {"model": 0.0, "bundle": 0.0}
        self._embedder_factory = embedder_factory or (
            lambda identity: embedder_for_identity(identity, settings.embed_texts)
        )

    def _touch(self, doc_id: str) -> None:
        """Mark `doc_id` as asked last; forget the documents asked longest ago beyond the limit."""
        with self._open_lock:
            self._open[doc_id] = None
            self._open.move_to_end(doc_id)
            over = len(self._open) - max(1, self.max_open_documents)
            stale = [self._open.popitem(last=False)[0] for _ in range(over)]
        for old in stale:
            self._forget(old)

    def _forget(self, doc_id: str) -> None:
        """Drop a document's loaded state. A thread still answering over it keeps its objects; a
        closed SQL connection reopens on its next query."""
        self._indexes.pop(doc_id, None)
        self._windows.pop(doc_id, None)
        self._envs.pop(doc_id, None)
        store = self._stores.pop(doc_id, None)
        if store is not None:
            store.close()

    def index(self, doc_id: str) -> DocumentIndex:
        self._touch(doc_id)
        if doc_id not in self._indexes:
            started = time.perf_counter()
            self._indexes[doc_id] = DocumentIndex.load(self.workspace, doc_id)
            self.load_seconds["bundle"] += time.perf_counter() - started
        return self._indexes[doc_id]

    def store(self, doc_id: str) -> NarrativeStore:
        if doc_id not in self._stores:
            index = self.index(doc_id)
            started = time.perf_counter()
            self._stores[doc_id] = NarrativeStore.load(self.workspace, doc_id, index)
            self.load_seconds["bundle"] += time.perf_counter() - started
        return self._stores[doc_id]

    def windows(self, doc_id: str) -> FineWindows:
        """The document's fine windows and their BM25 index (the `hybrid_fine` baseline), built once."""
        if doc_id not in self._windows:
            index = self.index(doc_id)
            embedder = (
                self.embedder(index.embedding_model)
                if self.settings.retrieval.dense_window_score == "window"
                else None
            )
            started = time.perf_counter()
            windows = build_windows(index.sentences, index.language)
            if embedder is not None:
                windows = with_vectors(windows, embedder.embed)
                if hasattr(embedder, "flush"):
                    embedder.flush()  # the next session reads the windows' vectors from the store
            self._windows[doc_id] = windows
            self.load_seconds["bundle"] += time.perf_counter() - started
        return self._windows[doc_id]

    def tool_env(self, doc_id: str, embed: Callable | None) -> ToolEnv:
        """The document's tool environment (store, SQL connection, query-vector cache), built once
        per session."""
        env = self._envs.get(doc_id)
        if env is None or env.embed_texts != embed:
            env = self._envs[doc_id] = ToolEnv(
                self.store(doc_id),
                embed,
                hierarchy=self.settings.answer.hierarchy,
                attributes=self.settings.answer.attributes,
                dense_chunk_score=self.settings.retrieval.dense_chunk_score,
                windows_source=lambda: self.windows(doc_id),
            )
        return env

    def embedder(self, identity: str | None) -> Embedder | None:
        """The embedder matching the document's stored vectors, loaded once per session (the load
        is paid here, not inside the first answer's latency)."""
        if identity not in self._embedders:
            started = time.perf_counter()
            # Query vectors come from the build's vector store when the text was embedded there.
            embedder = caching(self._embedder_factory(identity), self.workspace.cache_dir / "vectors")
            if embedder is not None:
                embedder.embed(["warm up"])
            self._embedders[identity] = embedder
            self.load_seconds["model"] += time.perf_counter() - started
        return self._embedders[identity]

    def ask(
        self,
        doc_id: str,
        question: str,
        options: list[str] | None = None,
        system: str = "nkw",
        sample: int = 0,
    ) -> Answer:
        """Answer with `system`: 'nkw' (the whole bundle), 'hybrid' (the 450-word baseline) or
        'hybrid_fine' (the fine-window baseline at the same source-token budget)."""
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; choose one of {', '.join(SYSTEMS)}")
        index = self.index(doc_id)
        embedder = self.embedder(index.embedding_model)
        embed = embedder.embed if embedder is not None else None
        store = self.store(doc_id) if system == "nkw" else None  # loading the bundle is not answer latency
        windows = self.windows(doc_id) if system == "hybrid_fine" else None
        started = time.perf_counter()
        sampled = (
            {}
            if self.sample_temperature is None
            else {"seed": sample, "temperature": self.sample_temperature}
        )
        if store is not None:
            env = self.tool_env(doc_id, embed)
            planner, finalize, select, recorder, read = offline_planner, None, None, None, decompose
            write_global = None
            if self.llm is not None:
                # A recorder per question keeps every llm_calls row its planner, selector and finalizer make.
                recorder = RecordingClient(self.llm)
                language = env.store.source.language
                factory = request_factory_for(doc_id, language, question, options or None, **sampled)
                finalize = make_llm_finalizer(
                    recorder, factory, audit_options=make_option_audit(recorder, factory)
                )
                write_global = make_global_writer(recorder, factory)
                if self.settings.answer.llm_steps == "agent":
                    planner = make_llm_planner(
                        recorder, factory, fallback=offline_planner, required=shape_calls
                    )
                    select = llm_skill_selector(recorder, factory, language)
                    read = make_llm_decomposer(recorder, factory)
                else:  # the model as the reader alone: one request a question
                    finalize.audit_options = None
            answer = answer_nkw(
                env,
                question,
                options or None,
                self.settings.answer,
                self.settings.retrieval,
                planner=planner,
                select_skills=select,
                finalize=finalize,
                read_question=read,
                write_global=write_global,
            )
            if recorder is not None:
                planner_failures = getattr(planner, "failures", [])  # the offline planner keeps none
                answer.notes.extend(getattr(planner, "notes", []))
                answer.llm_calls = recorder.calls
                failures = {
                    f["item_id"]: f
                    for f in reversed(
                        recorder.failures + planner_failures + finalize.failures + write_global.failures
                    )
                }
                answer.failures = list(failures.values())
        elif windows is not None:
            answer = self._ask_fine(index, windows, question, options or None, embedder, sampled)
        elif self.llm is not None:
            # The fair baseline: the same LLM and final-answer prompt over the baseline's top-k chunks.
            query_vector = embedder.embed([question])[0] if embedder is not None else None
            recorder = RecordingClient(self.llm)
            factory = request_factory_for(doc_id, index.language, question, options or None, **sampled)
            answer = answer_hybrid_llm(
                index,
                question,
                options or None,
                query_vector,
                embed,
                self.settings.retrieval,
                recorder,
                factory,
            )
            answer.llm_calls = recorder.calls
            answer.failures = answer.failures + recorder.failures
        else:
            query_vector = embedder.embed([question])[0] if embedder is not None else None
            answer = answer_hybrid(
                index,
                question,
                options or None,
                query_vector,
                embed,
                self.settings.retrieval,
                answer_words(question, options or None, self.settings.answer),
            )
        answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        return answer

    def _ask_fine(
        self,
        index: DocumentIndex,
        windows: FineWindows,
        question: str,
        options: list[str] | None,
        embedder: Embedder | None,
        sampled: dict[str, Any],
    ) -> Answer:
        """The fine-window baseline: with the LLM when one is configured, else extractive."""
        embed = embedder.embed if embedder is not None else None
        query_vector = embedder.embed([question])[0] if embedder is not None else None
        budget = self.settings.answer.source_token_budget  # 0: the 450-word hybrid's, as for NKW
        if self.llm is None:
            return answer_hybrid_fine(
                index,
                windows,
                question,
                options,
                query_vector,
                embed,
                self.settings.retrieval,
                budget,
                answer_words(question, options, self.settings.answer),
            )
        recorder = RecordingClient(self.llm)
        factory = request_factory_for(index.doc_id, index.language, question, options, **sampled)
        answer = answer_hybrid_fine_llm(
            index,
            windows,
            question,
            options,
            query_vector,
            embed,
            self.settings.retrieval,
            recorder,
            factory,
            budget,
        )
        answer.llm_calls = recorder.calls
        answer.failures = answer.failures + recorder.failures
        return answer


def llm_skill_selector(client: Any, factory: Callable, language: str) -> Callable:
    """Reading-skill selection by the LLM from a compact sketch of the board (offline on failure)."""

    def select(question: str, options: list[str] | None, intents: Any, board: Any) -> list[str]:
        sketch = "; ".join(f"[{p.ordinal}] {p.heading}" for p in board.passages[:8])
        return select_skills_llm(
            client,
            lambda pid, values: factory(pid, values, "select_skills"),
            question,
            options,
            sketch,
            intents=intents,
            language=language,
        )

    return select


def warm_up(engine: QueryEngine, doc_id: str) -> None:
    """Load the document, its bundle and its embedder so the first timed question does not pay for it."""
    index = engine.index(doc_id)
    engine.store(doc_id).prepare()
    engine.windows(doc_id)
    embedder = engine.embedder(index.embedding_model)
    if embedder is not None:
        embedder.embed(["warm up"])
