"""Docs checks: README stays short, names every flag of every command, and every `nkw` command
shown in README or docs/ parses with the real command line; every relative link resolves."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from flows.cli.main import build_parser

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_FENCES = ("bash", "sh", "console", "")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def shell_blocks(text: str) -> list[str]:
    """The fenced blocks of a Markdown text that hold shell commands (```bash, ```sh, bare ```)."""
    blocks, current, language = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current, language = [], line[3:].strip()
            else:
                if language in SHELL_FENCES:
                    blocks.append("\n".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def command_lines(text: str) -> list[str]:
    """`nkw ...` lines inside shell blocks, continuation lines joined, comments dropped."""
    lines = []
    for block in shell_blocks(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            line = re.sub(r"^\$ ", "", line)
            if line.startswith("nkw ") or line == "nkw":
                lines.append(line)
    return lines


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its path, e.g. 'build', 'llm check'."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {k}": v for k, v in subcommands(sub).items()})
    return found


def test_readme_is_read_in_five_minutes():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_shown_command_parses(document: Path):
    parser = build_parser()
    for line in command_lines(document.read_text(encoding="utf-8")):
        argv = [a for a in shlex.split(line)[1:] if a not in ("|", ">")]
        if any(a in ("--help", "-h") for a in argv):
            continue
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{document.name}: `{line}` does not parse (exit {exc.code})")


def test_readme_names_every_flag_of_every_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Commands", 1)[1].split("\n## ", 1)[0]
    missing = []
    for path, sub in subcommands(build_parser()).items():
        if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            assert f"nkw {path}" in section, f"README's Commands section has no `nkw {path}`"
        for action in sub._actions:
            long = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
            if long and not any(re.search(re.escape(o) + r"(?![\w-])", section) for o in long):
                missing.append(f"nkw {path} {long[0]}")
    assert missing == [], missing


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_relative_links_resolve(document: Path):
    for target in LINK.findall(document.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (document.parent / target).exists(), f"{document.name}: broken link {target}"
