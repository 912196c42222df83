"""Wall times of the check's phases, in one module so the conftest and the tests share them (pytest
loads a conftest apart from the module the tests import)."""

from __future__ import annotations

TIMINGS: dict[str, float] = {}
