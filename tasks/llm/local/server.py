"""llama.cpp's OpenAI-compatible server (through xllamacpp) as a child process on 127.0.0.1.

xllamacpp's `Server` serves from threads of the process that builds it, until that process ends,
so it runs in a child we can stop: `LocalServer` starts it, waits until `/v1/models` answers and
stops it on exit, on errors and on Ctrl-C. The child also exits when its stdin closes, so even a
parent killed outright leaves no server behind. xllamacpp is imported only in the child.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import httpx

from tasks.llm.client.deadline import deadline_http_client, total_deadline

HOST = "127.0.0.1"
MODELS_REPLY_BYTES = 1024 * 1024  # a /models list names a model or two
SLOT_DIR_ENV = "NKW_LLAMA_SLOT_DIR"


class LocalServerError(Exception):
    """The local server did not start or answer; the message is one line for the user."""


@dataclass(frozen=True)
class ServerOptions:
    """What the child needs to serve one GGUF file."""

    model_path: str
    alias: str
    context: int  # tokens per slot (prompt + reply)
    parallel: int
    decode_threads: int
    prompt_threads: int
    port: int


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def models_reply(base_url: str, timeout_s: float = 2.0) -> dict | None:
    """The JSON of GET {base_url}/models, or None while nothing (or a loading server) answers."""
    # Bounded in time and in size once decoded, as every other reply (tasks.llm.client.bounded_reply).
    with deadline_http_client(httpx.Limits(max_connections=1), timeout_s, MODELS_REPLY_BYTES) as client:
        try:
            with total_deadline(timeout_s):
                reply = client.get(f"{base_url}/models")
            if reply.status_code != 200:
                return None
            data = reply.json()
        except (httpx.HTTPError, OSError, ValueError):
            return None
    return data if isinstance(data, dict) else None


def wait_until_ready(
    base_url: str, timeout_s: float, is_alive: Callable[[], bool] = lambda: True, poll_s: float = 0.5
) -> dict:
    """Poll /v1/models until it lists a model; LocalServerError on timeout or when the child ended."""
    deadline = time.monotonic() + timeout_s
    while True:
        reply = models_reply(base_url)
        if reply and reply.get("data"):
            return reply
        if not is_alive():
            raise LocalServerError("the local model server exited while starting")
        if time.monotonic() >= deadline:
            raise LocalServerError(
                f"the local model server at {base_url} did not answer within {timeout_s:.0f} s"
            )
        time.sleep(poll_s)


def child_command(options: ServerOptions) -> list[str]:
    return [sys.executable, "-m", "tasks.llm.local.server", json.dumps(asdict(options))]


class LocalServer:
    """Context manager: a started, answering local server; stopped (and reaped) on exit."""

    def __init__(
        self,
        options: ServerOptions,
        startup_timeout_s: float = 180.0,
        command: Sequence[str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.options = options
        self.startup_timeout_s = startup_timeout_s
        self.command = list(command) if command is not None else child_command(options)
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self._own_log = False
        self.slot_dir: str | None = None
        self.models: dict = {}

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.options.port}/v1"

    def start(self) -> "LocalServer":
        if self.log_path is None:  # a log of our own, removed when the server stops
            handle, name = tempfile.mkstemp(prefix="nkw-llama-", suffix=".log")
            os.close(handle)
            self.log_path, self._own_log = Path(name), True
        # Where the server saves a slot's cache to copy it into another slot (a stage's instructions
        # computed once for all slots: tasks.llm.client.slot_copies); removed when it stops.
        self.slot_dir = tempfile.mkdtemp(prefix="nkw-slots-")
        try:
            environment = {**os.environ, SLOT_DIR_ENV: self.slot_dir}
            with open(self.log_path, "wb") as log:
                # Its own session: Ctrl-C reaches only us, and we stop the child in order.
                self.process = subprocess.Popen(
                    self.command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, cwd=_project_root(), env=environment,
                )  # fmt: skip
        except BaseException:
            self.stop()  # the files it made go with it
            raise
        try:
            self.models = wait_until_ready(self.url, self.startup_timeout_s, self.is_alive)
        except BaseException as exc:
            tail = self.log_tail()
            self.stop()
            if isinstance(exc, LocalServerError):
                raise LocalServerError(f"{exc}; {tail}") from None
            raise
        return self

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def context_tokens(self) -> int | None:
        """The per-slot context the server reports (llama.cpp: meta.n_ctx of the model)."""
        for model in self.models.get("data", []):
            meta = model.get("meta") or {}
            if meta.get("n_ctx"):
                return int(meta["n_ctx"])
        return None

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines() if self.log_path else []
        except OSError:
            text = []
        tail = " | ".join(line.strip() for line in text[-lines:])
        return f"server log: {tail or '(empty)'}"

    def stop(self, grace_s: float = 10.0) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.stdin:
                process.stdin.close()  # the child exits on EOF; terminate() covers a child that hangs
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(grace_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
        if self.slot_dir is not None:
            shutil.rmtree(self.slot_dir, ignore_errors=True)
            self.slot_dir = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _project_root() -> str:
    # The child runs `-m tasks.llm.local.server`: it must import this package, installed or not.
    return str(Path(__file__).resolve().parents[3])


def serve(options: ServerOptions) -> None:
    """Child process: build llama.cpp's server and serve until stdin closes or a signal ends us."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = options.model_path
    params.model_alias = {options.alias}
    params.n_ctx = options.context * options.parallel  # llama.cpp divides n_ctx among the slots
    params.n_parallel = options.parallel
    # Decode on few threads: on a busy small machine extra decode threads spin against other
    # processes and decoding slows down several times (prompt processing scales, so it gets more).
    params.cpuparams.n_threads = options.decode_threads
    params.cpuparams_batch.n_threads = options.prompt_threads
    params.hostnames = [HOST]
    params.port = options.port
    params.use_jinja = True  # the model's chat template: tool calls and JSON replies
    slot_dir = os.environ.get(SLOT_DIR_ENV, "")
    # llama.cpp joins this path and a file name as they are (its command line adds the separator).
    params.slot_save_path = os.path.join(slot_dir, "") if slot_dir else ""
    _server = xllamacpp.Server(params)  # returns once loaded and listening; serves while referenced
    sys.stdin.buffer.read()  # blocks until the parent closes the pipe or dies
    # No `del server`: its destructor waits for the requests in flight, so a parent killed while a
    # client (an eval it started) still asked left the server running, orphaned, for as long as that
    # client kept asking. The process ends here, its threads with it.
    os._exit(0)


if __name__ == "__main__":
    serve(ServerOptions(**json.loads(sys.argv[1])))
