"""Checks on the arguments as given, before a command runs: text that is not UTF-8, names too long."""

from __future__ import annotations

import argparse
import os

from tasks.terminal import safe_text

# Arguments that name files: any bytes the file system allows. Every other argument is text.
PATH_ARGUMENTS = ("workspace", "out", "config", "questions", "paths", "cache_dir", "local_llm", "local_model",
                  "embeddings_model")  # fmt: skip
POSITIONALS = ("question", "query", "doc_ids")
# --samples of eval and ablate: Pass@N is reported up to N = 100, and each sample is a whole answer,
# so 2^63 of them would run until killed.
MAX_SAMPLES = 100


def not_utf8(args: argparse.Namespace) -> str | None:
    """The first text argument holding bytes that are not UTF-8 (Python keeps them as lone surrogates,
    which DuckDB, Parquet and JSON refuse deep inside a command); paths may hold any bytes."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return name.upper() if name in POSITIONALS else f"--{name.replace('_', '-')}"
    return None


def shortened(name: str | bytes | None, keep: int = 80) -> str:
    """A path for an error line: its start and end when long, control characters made visible."""
    text = os.fsdecode(name) if name is not None else "(unnamed)"
    if len(text) > keep:
        text = f"{text[: keep - 20]}...{text[-17:]} ({len(text)} characters)"
    return safe_text(text, one_line=True)
