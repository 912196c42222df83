"""Process settings chosen once at CLI start, before any model library is imported.

On a small shared host, OpenMP worker threads that spin while waiting for work burn the
cores other threads (and other processes) need: PyTorch's sentence embedding runs about
twice as fast with passive waiting. The user's own settings always win.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def configure_process(environ: dict[str, str] | None = None, cores: int | None = None) -> dict[str, str]:
    """Set passive OpenMP waiting and one thread per core unless already set; returns what was set."""
    environ = os.environ if environ is None else environ
    cores = cores or os.cpu_count() or 1
    chosen = {"OMP_WAIT_POLICY": "PASSIVE", **{name: str(cores) for name in THREAD_VARIABLES}}
    applied = {}
    for name, value in chosen.items():
        if name not in environ:
            environ[name] = value
            applied[name] = value
    return applied
