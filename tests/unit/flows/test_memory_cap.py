"""`nkw sql`'s memory ceiling: sizes, and the resident-memory watch behind RLIMIT_DATA."""

from __future__ import annotations

import threading

import pytest

from flows.cli import memory_cap
from flows.cli.memory_cap import capped_memory, memory_bytes


def test_sizes_read_like_duckdbs():
    assert memory_bytes("1GB") == 10**9 and memory_bytes("512 MiB") == 512 * 2**20
    with pytest.raises(ValueError):
        memory_bytes("lots")


def test_the_watch_calls_out_when_resident_memory_passes_the_ceiling_the_limit_did_not_see(monkeypatch):
    # Stands in for memory RLIMIT_DATA never sees (a thread arena opened by mprotect): no rlimit here.
    monkeypatch.setattr(memory_cap, "_set_ceiling", lambda extra: None)
    exceeded = threading.Event()
    with capped_memory(64 * 2**20, on_exceeded=exceeded.set):
        block = bytearray(256 * 2**20)  # zero-filled: every page touched
        assert exceeded.wait(5.0)
        del block
    calm = threading.Event()
    with capped_memory(512 * 2**20, on_exceeded=calm.set):
        small = bytearray(8 * 2**20)
        assert not calm.wait(0.2)  # within its room: never called
        del small
