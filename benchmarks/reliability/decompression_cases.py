"""Servers whose replies are small on the wire and huge once read (tests/fixtures/reply_bombs.py):
gzip, deflate and stacked bombs of 4 GiB, bodies declared huge or without end, an encoding never
asked for — answering `nkw llm check` (the LLM path) and a build's embeddings requests. Each must
end in one error line with the process's peak memory far below the bomb."""

from __future__ import annotations

from benchmarks.reliability.registry import Context, Outcome, case, judged
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reply_bombs import BOMB_KINDS

FAMILY = "decompression"
PEAK_MB = 600  # the CLI's own imports are ~250 MB; a 4 GiB bomb read in full is thousands


def _bounded(run, note: str) -> Outcome:
    outcome = judged(run, expect_error=True, note=f"{note}; peak {run.maxrss_mb:.0f} MB")
    if outcome.handled and run.maxrss_mb > PEAK_MB:
        return Outcome(False, note=f"{note}: peak {run.maxrss_mb:.0f} MB, over {PEAK_MB} MB")
    return outcome


def _llm_check(kind: str):
    def attack(ctx: Context) -> Outcome:
        with FakeOpenAIServer(model_names=["bench-model"], bomb=kind) as server:
            run = ctx.nkw("llm", "check", "--llm-url", server.url, "--model", "bench-model", timeout=120)
        return _bounded(run, f"llm check against {kind}")

    attack.__name__ = f"llm_check_{kind}"
    return attack


def _embeddings(kind: str):
    def attack(ctx: Context) -> Outcome:
        sample = ctx.scratch / "bomb.txt"
        sample.write_text("Mara found the brass key under a stone. Tomas waited by the river.\n")
        with FakeOpenAIServer(model_names=["embedder"], bomb=kind) as server:
            run = ctx.nkw(
                "build", str(sample), "-w", str(ctx.scratch / f"ws_{kind}"), "--no-prefect", "-q",
                "--embeddings", "http", "--embeddings-url", server.url, "--embeddings-model", "embedder",
                timeout=300,
            )  # fmt: skip
        if run.hung or run.has_traceback:
            return judged(run)
        note = f"build with embeddings from {kind}: rc {run.rc}; peak {run.maxrss_mb:.0f} MB"
        if run.rc == 0:  # a build may not report success with its vectors lost
            return Outcome(False, data_loss=True, note=note)
        return Outcome(run.maxrss_mb <= PEAK_MB, note=note)

    attack.__name__ = f"embeddings_{kind}"
    return attack


for _kind in BOMB_KINDS:
    case(FAMILY)(_llm_check(_kind))
for _kind in ("gzip_bomb", "stacked_bomb", "endless_chunked"):
    case(FAMILY)(_embeddings(_kind))
