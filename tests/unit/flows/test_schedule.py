"""The in-document stage scheduler: dependency order, bounded concurrency, deterministic order of
results and progress, failures blocking only their dependants."""

from __future__ import annotations

import threading
import time

import pytest

from flows.build.runner import Resources, run_document
from flows.build.schedule import requests_first, run_graph, upstream
from flows.stages import STAGES, Stage, select_stages
from schemas.config import load_settings
from schemas.tables import spec
from tasks.embeddings import HashingEmbedder
from tasks.stage import RawDocument
from tasks.tables.io import Workspace, read_frame
from tasks.tables.manifest import load_manifest


def test_upstream_follows_tables_so_independent_branches_do_not_wait():
    waits = upstream(list(STAGES))
    assert waits["extract_graph"] == {s.name for s in STAGES[:4]}  # ingest .. split_sentences
    assert "extract_narrative" not in waits["extract_facts"]
    assert "extract_facts" not in waits["extract_narrative"]
    assert "index_terms" not in waits["embed_assets"] | waits["chain_continuity"]
    assert "embed_texts" not in waits["chain_continuity"] | waits["extract_facts"]
    # unit, episode and asset vectors are derived from the sentence vectors embed_texts writes
    assert {"assemble_episodes", "relate_episodes", "embed_assets"} <= {
        name for name, before in waits.items() if "embed_texts" in before
    }
    assert "induce_storylines" in waits["embed_assets"] and "extract_facts" in waits["embed_assets"]
    assert "assemble_episodes" not in waits["track_character_states"]
    assert "judge_continuity" in waits["chain_continuity"]


def test_upstream_of_a_selection_goes_through_stages_not_selected():
    # extract_narrative reads canonicalize's tables, which read extract_graph's: it still waits.
    waits = upstream(select_stages(["extract_graph", "extract_narrative", "index_terms"]))
    assert waits == {
        "index_terms": frozenset(),
        "extract_graph": frozenset(),
        "extract_narrative": frozenset({"extract_graph"}),
    }


def _graph(names_reads: dict[str, tuple[str, ...]]) -> list[Stage]:
    # Stage "x" writes table "x"; reads are the tables (= stages) it depends on.
    return [Stage(name, lambda ctx: {}, reads, (name,), "1") for name, reads in names_reads.items()]


def test_run_graph_respects_dependencies_and_the_bound():
    stages = _graph({"a": (), "b": ("a",), "c": ("a",), "d": ("a",), "e": ("b", "c"), "f": ()})
    waits = upstream(stages, graph=())
    lock, running, peak, finished = threading.Lock(), [0], [0], []

    def work(name: str) -> str:
        with lock:
            assert waits[name] <= set(finished), f"{name} started before {waits[name] - set(finished)}"
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
            finished.append(name)
        return name.upper()

    assert run_graph([s.name for s in stages], waits, work, workers=2) == ["A", "B", "C", "D", "E", "F"]
    assert peak[0] == 2


def test_requests_first_holds_back_only_stages_that_lead_to_no_request():
    gates = requests_first(list(STAGES))
    # embed_texts leads to requests: assemble_episodes derives unit vectors from its sentence vectors.
    assert set(gates) == {"index_terms", "embed_assets"}
    assert {"extract_graph", "embed_texts", "propose_continuity", "judge_continuity"} <= gates["index_terms"]
    assert "track_character_states" not in gates["index_terms"]  # it leads to no other request
    # the rest it waits for anyway; detect_communities leads to summarize_hierarchy's requests
    assert gates["embed_assets"] == {"propose_continuity", "judge_continuity", "detect_communities"}
    assert "extract_facts" not in upstream(list(STAGES))["propose_continuity"]
    offline = [Stage(s.name, s.run, s.reads, s.writes, s.version) for s in STAGES]  # no LLM stage
    assert requests_first(offline) == {}


def test_a_held_back_stage_starts_once_its_gate_has_started_not_finished():
    started: list[str] = []
    release = threading.Event()

    def work(name: str) -> str:
        started.append(name)
        if name == "request":
            assert release.wait(5)  # still running when "index" may start
        else:
            release.set()
        return name

    out = run_graph(["index", "request"], {}, work, workers=2, starts_after={"index": frozenset({"request"})})
    assert out == ["index", "request"] and started == ["request", "index"]


def test_results_and_emits_come_in_list_order_whatever_finishes_first():
    release = threading.Event()
    emitted: list[str] = []

    def work(name: str) -> str:
        if name == "slow":
            assert release.wait(5)
        else:
            release.set()  # "fast" finishes while "slow" is still running
        return name

    out = run_graph(["slow", "fast"], {}, work, workers=2, emit=lambda n, r: emitted.append(r))
    assert out == ["slow", "fast"] and emitted == ["slow", "fast"]


def test_one_worker_runs_everything_in_the_calling_thread_in_order():
    seen: list[tuple[str, str]] = []
    run_graph(["x", "y"], {"y": frozenset({"x"})}, lambda n: seen.append((n, threading.current_thread())), 1)
    assert seen == [("x", threading.current_thread()), ("y", threading.current_thread())]


def test_an_error_is_raised_after_the_running_calls_finish_and_nothing_new_starts():
    started: list[str] = []
    done = threading.Event()

    def work(name: str) -> None:
        started.append(name)
        if name == "bad":
            raise KeyboardInterrupt("killed")
        if name == "slow":
            time.sleep(0.1)
            done.set()

    with pytest.raises(KeyboardInterrupt):
        run_graph(["slow", "bad", "after"], {"after": frozenset({"bad"})}, work, workers=2)
    assert done.is_set() and "after" not in started


def test_a_cycle_is_an_error_not_a_hang():
    with pytest.raises(ValueError, match="wait for one another"):
        run_graph(["a", "b"], {"a": frozenset({"b"}), "b": frozenset({"a"})}, lambda n: n, workers=2)


def _document() -> RawDocument:
    return RawDocument("doc", "Doc", "INT. ROOM - DAY\n\nAnna waits.", "en", "screenplay", "doc.txt")


def test_a_failed_stage_blocks_only_its_dependants_and_outcomes_keep_graph_order(tmp_path):
    def boom(ctx):
        raise RuntimeError("boom")

    stages = [s if s.name != "extract_graph" else Stage(**{**s.__dict__, "run": boom}) for s in STAGES]
    settings = load_settings(
        overrides={"embed_texts": {"backend": "hashing"}, "build": {"stage_concurrency": 4}}
    )
    resources = Resources(settings=settings, embedder_factory=HashingEmbedder)
    lines: list[str] = []
    workspace = Workspace.at(tmp_path / "ws")
    report = run_document(
        workspace, _document(), stages, settings, resources, lambda doc, o: lines.append(o.stage)
    )
    assert [o.stage for o in report.outcomes] == [s.name for s in STAGES] == lines
    status = {o.stage: o.status for o in report.outcomes}
    assert status["extract_graph"] == "failed"
    assert status["index_terms"] == status["embed_texts"] == "built"  # beside it in the graph
    names = [s.name for s in STAGES]
    assert {n for n, s in status.items() if s == "blocked"} == set(names[names.index("extract_graph") + 1 :])
    assert load_manifest(workspace, "doc").stages["extract_graph"].status == "failed"
    assert "boom" in read_frame(workspace, "failures")["error"].iloc[0]


def test_a_forced_stage_with_unchanged_output_leaves_its_readers_skipped(tmp_path):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    resources = Resources(settings=settings, embedder_factory=HashingEmbedder)
    workspace = Workspace.at(tmp_path / "ws")
    first = run_document(workspace, _document(), list(STAGES), settings, resources)
    assert {o.status for o in first.outcomes} == {"built"}
    resources.force = frozenset({"split_chunks"})
    report = run_document(workspace, _document(), list(STAGES), settings, resources)
    again = {o.stage: o.status for o in report.outcomes}
    assert again["split_chunks"] == "built" and again["segment_sections"] == "skipped"
    # Same chunks, same hashes: every later stage's fingerprint is unchanged, so they skip.
    assert {s for s, v in again.items() if v == "built"} == {"split_chunks"}


def test_contract_references_point_upstream_so_checks_never_race():
    # A stage's outputs are checked against the tables their foreign keys reference: each must be
    # written by the stage itself or by a stage it waits for, never by one running beside it.
    waits = upstream(list(STAGES))
    writer = {table: stage.name for stage in STAGES for table in stage.writes}
    for stage in STAGES:
        for table in (*stage.writes, *stage.side_writes):
            for fk in spec(table).foreign_keys:
                source = writer.get(fk.ref_table)
                assert source in (None, stage.name) or source in waits[stage.name], (stage.name, fk)
