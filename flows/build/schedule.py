"""Run one document's stages as a dependency graph: a stage starts as soon as every stage
upstream of it is done, so LLM requests stay in flight while CPU and embedding stages run.

Upstream is taken from the whole stage graph (flows.stages), not only from the stages selected:
with `--stages`, a selected stage still waits for a selected stage it depends on through one
that is not selected, so a failure's invalidation (flows.build.invalidate) happens before its
readers start, as in a sequential run. Outcomes are reported in the order of the stage list,
whatever order the stages finish in. Plain threads, no Prefect: each worker runs in a copy of
the caller's context, so Prefect task runs started there belong to the caller's run.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Sequence, TypeVar

from flows.stages import STAGES, Stage

Result = TypeVar("Result")


def upstream(stages: Sequence[Stage], graph: Sequence[Stage] = STAGES) -> dict[str, frozenset[str]]:
    """For each stage of `stages`, the stages of `stages` it must wait for: those that write a table
    it reads, directly or through other stages of `stages` or of `graph`."""
    names = {stage.name for stage in stages}
    known = list(stages) + [stage for stage in graph if stage.name not in names]
    writer: dict[str, str] = {}
    for stage in reversed(known):  # a selected stage's writes win over the graph's
        writer.update({table: stage.name for table in stage.writes})
    by_name = {stage.name: stage for stage in known}
    ancestors: dict[str, set[str]] = {}

    def visit(name: str, path: frozenset[str]) -> set[str]:
        if name not in ancestors:
            found: set[str] = set()
            for table in by_name[name].reads:
                source = writer.get(table)
                if source is not None and source != name and source not in path:
                    found |= {source} | visit(source, path | {name})
            ancestors[name] = found
        return ancestors[name]

    return {stage.name: frozenset(visit(stage.name, frozenset()) & names) for stage in stages}


def requests_first(stages: Sequence[Stage]) -> dict[str, frozenset[str]]:
    """With an LLM: the stages that lead to no request (indexing, embedding) start only once every
    stage leading to one has started, so their CPU work overlaps with requests in flight instead
    of delaying the next request; name -> the stages it waits to see started."""
    waits = upstream(stages)
    llm_stages = {stage.name for stage in stages if stage.uses_llm}
    feeders = {name for stage in llm_stages for name in waits[stage]}  # some LLM stage waits for them
    leads = feeders | llm_stages
    return {
        stage.name: frozenset(feeders - waits[stage.name])
        for stage in stages
        if stage.name not in leads and feeders - waits[stage.name]
    }


def run_graph(
    names: Sequence[str],
    waits_for: dict[str, frozenset[str]],
    work: Callable[[str], Result],
    workers: int,
    emit: Callable[[str, Result], None] | None = None,
    starts_after: dict[str, frozenset[str]] | None = None,
) -> list[Result]:
    """`work(name)` for every name once all of `waits_for[name]` are done and all of
    `starts_after[name]` have started, at most `workers` at a time (ready names start in list
    order); returns the results in list order and calls `emit` in that order too, each as soon as
    it and every name before it are done. With one worker, everything runs in the calling thread in
    list order. An exception from `work` is raised once the running calls finish."""
    results: dict[str, Result] = {}
    emitted = 0

    def flush() -> None:
        nonlocal emitted
        while emitted < len(names) and names[emitted] in results:
            if emit is not None:
                emit(names[emitted], results[names[emitted]])
            emitted += 1

    if workers <= 1:
        for name in names:
            results[name] = work(name)
            flush()
        return [results[name] for name in names]
    waiting = list(names)
    gates = {name: frozenset(after) & set(names) for name, after in (starts_after or {}).items()}
    running: dict[Future, str] = {}
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stage") as pool:
        while waiting or running:
            while error is None and len(running) < workers:
                started = set(names) - set(waiting)  # a start may open another's gate
                ready = next(
                    (
                        n
                        for n in waiting
                        if waits_for.get(n, frozenset()) <= results.keys()
                        and gates.get(n, frozenset()) <= started
                    ),
                    None,
                )
                if ready is None:
                    break
                waiting.remove(ready)
                running[pool.submit(contextvars.copy_context().run, work, ready)] = ready
            if not running:
                if error is not None or not waiting:
                    break
                raise ValueError(f"stages wait for one another: {', '.join(waiting)}")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: names.index(running[f])):
                name = running.pop(future)
                try:
                    results[name] = future.result()
                except BaseException as exc:  # noqa: BLE001 - re-raised below once the others finish
                    error = error or exc
            flush()
    if error is not None:
        raise error
    return [results[name] for name in names]
