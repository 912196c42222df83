"""Resource exhaustion and the temporary Prefect server: a full disk while a build or an
evaluation writes, a Prefect server that does not start in time, a build killed while its
Prefect server runs. One line on the terminal, a non-zero exit where something was lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from benchmarks.reliability.registry import REPO, Context, Outcome, case, judged

FAMILY = "resources"
# `nkw build` with the write layer raising ENOSPC for some tables (the disk fills up there).
FULL_DISK = (
    "import errno, sys\n"
    "from flows.build import runner\n"
    "from flows.cli.main import main\n"
    "full, write = set(sys.argv[1].split(',')), runner.write_table\n"
    "def write_or_fail(workspace, name, *args, **kwargs):\n"
    "    if name in full:\n"
    "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
    "    return write(workspace, name, *args, **kwargs)\n"
    "runner.write_table = write_or_fail\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def _build_args(ws) -> list[str]:
    from tests.conftest import SCREENPLAY

    return ["build", str(SCREENPLAY), "-w", str(ws), "--embeddings", "hashing", "--until", "split_sentences"]


def _python(ctx: Context, code: str, *args: str, timeout: float = 300, env: dict | None = None):
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=REPO,
            env={**ctx.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        from benchmarks.reliability.registry import Run

        return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
    except subprocess.TimeoutExpired as exc:
        from benchmarks.reliability.registry import Run

        return Run(None, str(exc.stdout or ""), str(exc.stderr or ""), time.monotonic() - started)


def _full_disk(ctx: Context, name: str, tables: str, prefect: bool) -> Outcome:
    ws = ctx.scratch / f"disk-{name}"
    args = _build_args(ws) + ([] if prefect else ["--no-prefect"])
    run = _python(ctx, FULL_DISK, tables, *args)
    if run.hung or run.has_traceback:
        return judged(run)
    if run.rc == 0:
        return Outcome(False, data_loss=True, note="a build that could not write reported success")
    last = run.err.strip().splitlines()[-1] if run.err.strip() else ""
    if "failed:" not in run.out and not last.startswith("error: "):  # Prefect's own lines come first
        return Outcome(False, note=f"no failure line: {run.out[-200:]!r} {run.err[-200:]!r}")
    again = ctx.nkw(*_build_args(ws), "--no-prefect", timeout=300)
    return judged(again, expect_error=False, note=f"rc {run.rc}, then rebuilt")


@case(FAMILY)
def full_disk_at_one_table(ctx: Context) -> Outcome:
    return _full_disk(ctx, "one", "chunks", prefect=False)


@case(FAMILY)
def full_disk_everywhere(ctx: Context) -> Outcome:
    return _full_disk(ctx, "all", "chunks,failures,sections,sentences,documents", prefect=False)


@case(FAMILY)
def full_disk_in_a_prefect_build(ctx: Context) -> Outcome:
    return _full_disk(ctx, "prefect", "chunks", prefect=True)


@case(FAMILY)
def prefect_server_that_does_not_start_in_time(ctx: Context) -> Outcome:
    home = ctx.scratch / "prefect-slow"  # a fresh database: its migrations alone take longer than 1 s
    env = {"PREFECT_HOME": str(home), "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "1"}
    run = ctx.nkw(*_build_args(ctx.scratch / "prefect-slow-ws"), timeout=300, env=env)
    if run.rc == 0:
        return Outcome(True, note="the server started within 1 s after all")
    return _ended_with_an_error(run)


@case(FAMILY)
def build_killed_while_its_prefect_server_runs(ctx: Context) -> Outcome:
    env = {**ctx.env, "PREFECT_HOME": str(ctx.scratch / "prefect-kill")}
    process = subprocess.Popen(
        [sys.executable, "-m", "flows.cli.main", *_build_args(ctx.scratch / "kill-ws")],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = None
    deadline = time.monotonic() + 240
    while server is None and time.monotonic() < deadline and process.poll() is None:
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True)
        for pid in children.stdout.split():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"uvicorn" in handle.read():
                        server = int(pid)
            except OSError:
                pass
        time.sleep(0.2)
    if server is None:
        process.kill()
        process.communicate()
        return Outcome(False, note="no temporary server seen")
    time.sleep(3)  # let it serve the build a moment
    process.send_signal(signal.SIGKILL)
    try:
        out, err = process.communicate(timeout=30)  # the server writing to our pipe would hold it open
    except subprocess.TimeoutExpired:
        return Outcome(False, hang=True, note="the server outlived the build and held its terminal")
    for _ in range(100):
        if not os.path.exists(f"/proc/{server}"):
            break
        time.sleep(0.1)
    alive = os.path.exists(f"/proc/{server}") and "Z" not in open(f"/proc/{server}/stat").read().split()[2]
    if "Traceback" in out + err:
        return Outcome(False, traceback=True, note="the stopping server printed a traceback")
    return Outcome(not alive, note="server stopped" if not alive else "server still running")


def _ended_with_an_error(run) -> Outcome:
    """Prefect logs its own lines (no tracebacks); the command's verdict is its last line."""
    verdict = judged(run)
    if not verdict.handled:
        return verdict
    last = run.err.strip().splitlines()[-1] if run.err.strip() else ""
    return Outcome(bool(run.rc) and last.startswith("error: "), note=last[:120])


def _tmpfs(path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    return done.returncode == 0


@case(FAMILY)
def eval_on_a_full_disk(ctx: Context) -> Outcome | None:
    """A real full file system (a tiny tmpfs) under a built workspace; not run where mounting is refused."""
    mount = ctx.scratch / "tiny"
    if not _tmpfs(mount, "900k"):
        return None
    try:
        ws = mount / "ws"
        built = ctx.nkw(*_build_args(ws)[:4], "--embeddings", "hashing", "--no-prefect", timeout=300)
        if built.rc != 0:
            return Outcome(False, note=f"could not build on the tmpfs: {built.err[-200:]}")
        try:  # then fill what is left
            with open(mount / "filler", "ab") as handle:
                while True:
                    handle.write(b"\0" * 4096)
                    handle.flush()
        except OSError:
            pass
        from tests.conftest import SAMPLES

        questions = SAMPLES / "the_lighthouse_key.questions.jsonl"
        run = ctx.nkw(
            "eval", "-w", str(ws), "--questions", str(questions), "--embeddings", "hashing", timeout=300
        )
        if run.rc == 0:
            return Outcome(False, data_loss=True, note="an evaluation that could not write reported success")
        return _ended_with_an_error(run)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
