"""The slow tier's declarations (tests/tiers.py) name folders, modules and tests that exist: a renamed
module would otherwise fall back into `make test` without a word."""

from __future__ import annotations

import re

from tests.conftest import REPO
from tests.tiers import SLOW_FOLDERS, SLOW_MODULES, SLOW_TESTS, is_slow


def test_every_declared_folder_module_and_test_exists():
    missing = [p for p in (*SLOW_FOLDERS, *SLOW_MODULES) if not (REPO / p).exists()]
    for nodeid in SLOW_TESTS:
        path, name = nodeid.split("::")
        if not re.search(rf"^def {re.escape(name)}\(", (REPO / path).read_text(), re.M):
            missing.append(nodeid)
    assert missing == []


def test_parametrized_tests_and_folders_are_matched():
    assert is_slow("tests/faults/test_attack_inputs.py::test_x[a-b]")
    assert is_slow(f"{SLOW_TESTS[0]}[param]")
    assert not is_slow("tests/unit/flows/test_progress.py::test_something_else")
    assert not is_slow("tests/faultsy/test_x.py::test_y")
