"""Attack family "config files": every number of every configuration section, huge, negative,
NaN or infinite, and every string parsed later (URLs, memory sizes), is refused at validation —
"invalid configuration ...", exit 2 — instead of breaking a later stage. The fields are walked
from the models, so a new field is covered without touching this file."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from schemas.config import Settings, load_settings
from tests.faults.attack_kit import nkw_in_process


def numeric_fields() -> list[tuple[str, str]]:
    """(section, field) for every int or float field of every section."""
    return [
        (section, name)
        for section, info in Settings.model_fields.items()
        for name, field in info.annotation.model_fields.items()
        if field.annotation in (int, float)
    ]


HOSTILE_NUMBERS = {"huge": 9223372036854775807, "huger": 10**30, "negative": -(10**12),
                   "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


@pytest.mark.parametrize("value", list(HOSTILE_NUMBERS))
def test_every_numeric_field_refuses_hostile_values(value):
    accepted = []
    for section, name in numeric_fields():
        try:
            load_settings(overrides={section: {name: HOSTILE_NUMBERS[value]}})
        except ValidationError:
            continue
        accepted.append(f"{section}.{name}")
    assert accepted == []


def test_the_dict_of_list_caps_is_bounded_too():
    with pytest.raises(ValidationError):
        load_settings(overrides={"extract_graph": {"max_items": {"entities": 10**30}}})


@pytest.mark.parametrize(
    "section, name, value",
    [
        ("llm", "url", "http://[::1"),
        ("llm", "url", "ftp://example.org/v1"),
        ("llm", "url", "http://host:99999/v1"),
        ("llm", "url", "http://host /v1"),
        ("embed_texts", "url", "not a url"),
        ("evaluate", "judge_url", "file:///etc/passwd"),
        ("sql", "memory_limit", "1.2.3GB"),
        ("sql", "memory_limit", "99999999999999999999GB"),
    ],
)
def test_strings_parsed_later_are_parsed_at_validation(section, name, value):
    with pytest.raises(ValidationError):
        load_settings(overrides={section: {name: value}})


@pytest.mark.parametrize(
    "text",
    [
        "[build]\nmax_document_chars = 9223372036854775807\n",
        "[llm]\ntemperature = nan\n",
        "[sql]\ntimeout_s = inf\n",
        "[retrieval]\nrrf_k = -5\n",
        '[llm]\nurl = "http://[::1"\n',
    ],
)
def test_a_config_file_that_validated_then_broke_now_ends_in_one_line(text, tmp_path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    result = nkw_in_process(capsys, "build", "--dry-run", tmp_path, "-w", tmp_path / "ws", "--config", config)
    result.clean_failure()
    assert result.code == 2 and result.err.startswith("error: invalid configuration"), result.err


def test_a_config_file_that_is_a_fifo_is_named_as_such(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "c.toml")
    config = tmp_path / "c.toml"
    result = nkw_in_process(capsys, "sql", "SELECT 1", "-w", tmp_path, "--config", config, seconds=20)
    result.clean_failure()
    assert result.code == 2 and "FIFO" in result.err and "not found" not in result.err
