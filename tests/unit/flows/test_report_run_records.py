"""A run record that is damaged (found by the fuzz pass, tests/security/test_fuzz_cli.py): a JSON
value that is not an object, a start time that is not text, a record that is a link to some other
file. The report shows the run with its start unknown instead of ending in an AttributeError."""

from __future__ import annotations

import pandas as pd
import pytest

from flows.inspection.report import _run_rows, run_records
from tasks.tables.io import Workspace


@pytest.mark.parametrize("record", ["[]", "null", "1", '{"started": 5}', '{"started": ["x"]}', "link"])
def test_a_damaged_run_record_leaves_the_start_unknown(record, tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    runs_dir = workspace.root / "runs"
    runs_dir.mkdir(parents=True)
    if record == "link":  # a record planted as a link to some text file elsewhere: read as no record
        (tmp_path / "outside.json").write_text("must not change\n")
        (runs_dir / "run_a.json").symlink_to(tmp_path / "outside.json")
    else:
        (runs_dir / "run_a.json").write_text(record)
    runs = pd.DataFrame({"run_id": ["run_a"], "answered": [2]})
    assert run_records([workspace], runs)["started"].tolist() == [None]


def _runs(started: object) -> pd.DataFrame:
    frame = pd.DataFrame(
        {"run_id": ["run_a", "run_b"], "label": ["nkw", "nkw 2"], "system": ["nkw", "nkw"],
         "questions_file": ["q.jsonl", "q.jsonl"], "settings": [None, None], "question_limit": [None, 1],
         "samples": [1, 1], "variant": [None, None], "status": ["complete", "partial"],
         "answered": [2, 1], "expected": [2, 2], "started": ["2026-01-01T10:00:00+00:00", started]}
    )  # fmt: skip
    return frame.astype({"started": "string"}) if started is None else frame


@pytest.mark.parametrize("started", [None, float("nan"), ""])
def test_a_run_without_a_known_start_is_shown_with_a_dash(started):
    rows = _run_rows(_runs(started))
    starts = [row["cells"][1] for row in rows]
    assert starts == [[("2026-01-01 10:00:00", False)], [("—", False)]]
