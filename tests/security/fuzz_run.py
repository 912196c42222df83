"""Running one fuzz case as a user would: `nkw` in a fresh process inside the case's own folder, with
a time limit, no network (proxies point at a closed port) and the workspace damage applied; the
verdict lists every broken promise (traceback, hang, exit status, control bytes, a write through a
link)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, SAMPLES
from tests.security.fuzz_kit import Case, plant_paths

HANG_S = 90.0  # a case still running after this is a hang (a loaded 2-core machine needs slack)
SERVE_UP_S = 20.0  # `serve` with arguments it accepts runs until Ctrl-C: it gets this long, then SIGINT
DOCUMENTED = {0, 1, 2}
# Bytes a terminal obeys: ESC, BEL, backspace and the one-byte CSI (U+009B), as they decode.
CONTROL = ("\x1b", "\x07", "\x08", "\x9b")
JSON_VALUES = [
    b"{",
    b"null",
    b"[]",
    b'{"a": NaN}',
    b"1" * 5000,
    b'"\x1b[2J"',
    b"\xff\xfe{}",
    b'{"version": 99999999999999999999999}',
    b"[" * 100000,
    b'{"pid": -1, "host": 5}',
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(folder: Path) -> dict[str, str]:
    """The user's environment with no network, no API key and a home of the case's own."""
    closed = "http://127.0.0.1:9"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NKW_", "PREFECT_API"))}
    env.update(
        PYTHONPATH=str(REPO),
        HOME=str(folder / "home"),
        NKW_MODEL_CACHE=str(folder / "models"),
        PREFECT_HOME=str(folder / "prefect"),
        HTTP_PROXY=closed,
        HTTPS_PROXY=closed,
        ALL_PROXY=closed,
        http_proxy=closed,
        https_proxy=closed,
        NO_PROXY="127.0.0.1,localhost,::1",
        no_proxy="127.0.0.1,localhost,::1",
        NKW_API_KEY="",
        OPENAI_API_KEY="",
        HF_HUB_OFFLINE="1",
    )
    return env


def damage(ws: Path, kind: str, where: str, rng: random.Random, sentinel: Path) -> None:
    """Damage one file of the workspace copy (or the whole workspace for `where == "."`)."""
    path = ws / where
    if where == ".":
        whole(ws, kind)
        return
    if kind == "truncate":
        with open(path, "r+b") as handle:
            handle.truncate(rng.randrange(max(1, path.stat().st_size)))
        return
    if kind == "swap":  # a well-formed file of the same kind in the wrong place (wrong schema)
        same = [p for p in ws.rglob("*" + path.suffix) if p != path and p.is_file()]
        if same:
            shutil.copyfile(rng.choice(same), path)
        return
    path.unlink()
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "garbage":
        path.write_bytes(rng.randbytes(rng.choice([1, 7, 512, 9000])))
    elif kind == "json":
        path.write_bytes(rng.choice(JSON_VALUES))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "dev_zero":
        path.symlink_to(Path(os.devnull).with_name("zero"))
    elif kind == "link_out":
        path.symlink_to(sentinel)
    # "missing": left deleted


def whole(ws: Path, kind: str) -> None:
    lock = ws / "writer.lock"
    if kind == "no_tables":
        shutil.rmtree(ws / "tables")
    elif kind == "tables_file":
        shutil.rmtree(ws / "tables")
        (ws / "tables").write_text("not a folder\n")
    elif kind in ("root_file", "empty_root"):
        shutil.rmtree(ws)
        ws.mkdir() if kind == "empty_root" else ws.write_text("not a workspace\n")
    elif kind == "lock_fifo":
        os.mkfifo(lock)
    elif kind == "lock_dir":
        lock.mkdir()
    elif kind == "lock_live":  # held by a process that is alive (this test run) on this host
        lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": "now"}))
    elif kind == "lock_garbage":
        lock.write_bytes(b"\xff\x00garbage")


def expand(token: str | bytes, names: dict[str, str]) -> str | bytes:
    if isinstance(token, bytes):
        return token
    for name, value in names.items():
        token = token.replace("{" + name + "}", value)
    return token


def run_case(case: Case, root: Path, base: Path, seed: int) -> list[str]:
    """Run one case; the broken promises (empty when the command behaved)."""
    folder = root / f"case{case.number:03d}"
    (folder / "outside").mkdir(parents=True)
    (folder / "home").mkdir()
    sentinel = folder / "outside" / "sentinel.txt"
    sentinel.write_text("must not change\n")
    names = plant_paths(folder, sentinel)
    ws = folder / "ws"
    shutil.copytree(base, ws, symlinks=True)
    rng = random.Random(seed * 1000 + case.number)
    if case.damage:
        damage(ws, *case.damage, rng, sentinel)
    if case.config is not None:
        (folder / "config.toml").write_bytes(case.config)
    port = free_port()
    names.update(
        ws=str(ws),
        out=str(folder / "out"),
        config=str(folder / "config.toml"),
        port=str(port),
        sample=str(SAMPLES / "the_lighthouse_key.txt"),
        questions=str(SAMPLES / "the_lighthouse_key.questions.jsonl"),
    )
    argv = [sys.executable, "-m", "flows.cli.main", *(expand(t, names) for t in case.argv)]
    code, out, err, seconds, interrupted = execute(argv, folder, case.command == "serve", port)
    problems = verdict(case, code, out, err, seconds, interrupted)
    if sentinel.read_text() != "must not change\n" or sorted(os.listdir(folder / "outside")) != [
        "sentinel.txt"
    ]:
        problems.append("wrote through a link to a file outside the workspace")
    if not problems:
        shutil.rmtree(folder, ignore_errors=True)
    return [f"{case.describe()}\n    -> {p}" for p in problems]


def execute(argv: list, folder: Path, serve: bool, port: int) -> tuple[int | None, str, str, float, bool]:
    """(exit status or None on a hang, stdout, stderr, seconds, whether it was sent SIGINT)."""
    started = time.monotonic()
    with open(folder / "stdout", "wb") as out, open(folder / "stderr", "wb") as err:
        process = subprocess.Popen(
            argv,
            cwd=folder,
            env=environment(folder),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        interrupted = False
        try:
            if serve:
                interrupted = wait_for_server(process, port)
            code: int | None = process.wait(timeout=max(1.0, HANG_S - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    seconds = time.monotonic() - started
    read = lambda name: (folder / name).read_bytes().decode("utf-8", "replace")  # noqa: E731
    return code, read("stdout"), read("stderr"), seconds, interrupted


def wait_for_server(process: subprocess.Popen, port: int) -> bool:
    """A server that took its arguments answers on `port` (or runs past SERVE_UP_S): Ctrl-C it."""
    deadline = time.monotonic() + SERVE_UP_S
    while process.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.3)
    if process.poll() is not None:
        return False
    process.send_signal(signal.SIGINT)
    return True


def verdict(case: Case, code: int | None, out: str, err: str, seconds: float, interrupted: bool) -> list[str]:
    """What the outcome broke: the promises of docs/reliability.md."""
    problems = []
    if code is None:
        return [f"hang: still running after {seconds:.0f} s; stderr {err[-300:]!r}"]
    allowed = DOCUMENTED | ({130} if interrupted else set())
    if code not in allowed:
        problems.append(f"exit {code} (documented: {sorted(allowed)}); stderr {err[-300:]!r}")
    if "Traceback" in out + err:
        problems.append(f"traceback: {err[-1200:]!r}")
    elif "rerun with --debug" in err:
        problems.append(f"unexpected exception: {err.strip()[-400:]!r}")
    machine = any(str(t) in ("--json", "csv", "json") for t in case.argv)
    printed = err + ("" if machine else out)
    if any(c in printed for c in CONTROL):
        problems.append(f"raw control byte printed: {printed[:300]!r}")
    return problems
