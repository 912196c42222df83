"""Ctrl-C (SIGINT) sent to a real `nkw` process at moments of its first second and a half, for
several commands: each must end with the one line `interrupted` and exit 130 (or, when the
command had already ended, quietly), never a traceback and never a hang."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from benchmarks.reliability.registry import REPO, Context, Outcome, case

FAMILY = "startup_interrupts"
DELAYS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5)


def _commands(ctx: Context) -> dict[str, list[str]]:
    ws = str(ctx.workspace)
    questions = REPO / "data" / "samples" / "the_lighthouse_key.questions.jsonl"
    sample = REPO / "data" / "samples" / "the_lighthouse_key.txt"
    return {
        "eval": ["eval", "-w", ws, "--questions", str(questions), "--embeddings", "hashing", "-q"],
        "build": ["build", str(sample), "-w", str(ctx.scratch / "fresh"), "--embeddings", "hashing", "-q"],
        "ask": ["ask", "-w", ws, "Who hides the brass key?", "--embeddings", "hashing"],
        "sql": ["sql", "-w", ws, "SELECT count(*) FROM chunks"],
        "serve": ["serve", "-w", ws, "--port", "0", "--embeddings", "hashing"],
    }


def _interrupt(ctx: Context, args: list[str], delay: float) -> str | None:
    """None when handled; else what went wrong."""
    process = subprocess.Popen(
        [sys.executable, "-m", "flows.cli.main", *args],
        cwd=REPO,
        env=ctx.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    alive = process.poll() is None
    if alive:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return f"hang at {delay} s"
    if "Traceback" in err or "Exception ignored" in err:
        return f"traceback at {delay} s"
    lines = [line for line in err.splitlines() if line.strip()]
    if process.returncode == -signal.SIGINT and not lines:
        return None  # the command had ended; the interpreter was finalizing with default handlers
    if alive and (process.returncode != 130 or lines[-1:] != ["interrupted"]):
        return f"rc {process.returncode} at {delay} s: {lines[-1:]}"
    return None


def _attack(name: str):
    def attack(ctx: Context) -> Outcome:
        problems = [p for d in DELAYS if (p := _interrupt(ctx, _commands(ctx)[name], d))]
        return Outcome(
            not problems,
            traceback=any("traceback" in p for p in problems),
            hang=any("hang" in p for p in problems),
            note="; ".join(problems) or f"{len(DELAYS)} moments from {DELAYS[0]} to {DELAYS[-1]} s",
        )

    attack.__name__ = f"ctrl_c_early_in_{name}"
    return attack


for _name in ("eval", "build", "ask", "sql", "serve"):
    case(FAMILY)(_attack(_name))
