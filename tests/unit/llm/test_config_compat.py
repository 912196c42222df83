"""An old config file naming a removed [llm] setting gets one clear line, not pydantic's report."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from flows.cli.commands.common import UserError, settings_from


def test_a_removed_llm_setting_is_named_with_what_to_do(tmp_path: Path) -> None:
    config = tmp_path / "old.toml"
    config.write_text("[llm]\nguided_json_extra = true\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        settings_from(argparse.Namespace(config=str(config)))
    message = str(raised.value)
    assert message.startswith("invalid configuration: llm: [llm] guided_json_extra was removed")
    assert message.endswith("delete it from the config file")
    assert "\n" not in message and "errors.pydantic.dev" not in message


def test_other_invalid_values_still_name_their_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[llm]\ntimeout_s = -1\n", encoding="utf-8")
    expected = r"invalid configuration: llm\.timeout_s: Input should be greater than 0"
    with pytest.raises(UserError, match=expected):
        settings_from(argparse.Namespace(config=str(config)))
