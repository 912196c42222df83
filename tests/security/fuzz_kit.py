"""The fuzz pass's generator: seeded hostile command lines, config files and workspace damage for
every `nkw` command. Flags and config fields are walked from the real parser and settings models,
so a new flag or field is fuzzed without touching this file. Every path a case names lies in the
case's own folder: links point at a sentinel there, never at a file of the machine."""

from __future__ import annotations

import argparse
import functools
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from flows.cli.main import build_parser
from schemas.config import Settings

DOC = "the_lighthouse_key"
FAST = ["--embeddings", "hashing", "--no-prefect", "-q"]
# A valid invocation of each command on the tiny workspace; mutations make it hostile. `{name}`
# is a path of the case's folder (see `plant_paths`), `{port}` a free port.
BASE: dict[str, list[str]] = {
    "build": ["{sample}", "-w", "{ws}", *FAST],
    "remove": [DOC, "-w", "{ws}"],
    "ask": ["Who hides the brass key?", "-w", "{ws}", "--embeddings", "hashing"],
    "eval": ["-w", "{ws}", "--questions", "{questions}", "--limit", "1", *FAST],
    "ablate": ["-w", "{ws}", "--questions", "{questions}", "--limit", "1", "--settings", "full", *FAST],
    "serve": ["-w", "{ws}", "--embeddings", "hashing", "--port", "{port}"],
    "report": ["-w", "{ws}", "--out", "{out}"],
    "sql": ["SELECT count(*) FROM chunks", "-w", "{ws}"],
    "inspect": ["-w", "{ws}"],
    "view": ["-w", "{ws}", "--doc", DOC, "--out", "{out}"],
    "export": ["-w", "{ws}", "--format", "csv", "--out", "{out}"],
    "llm check": ["--llm-url", "http://127.0.0.1:9/v1", "--model", "m"],  # nothing listens on port 9
    "llm local": ["--model", "{missing}"],
    "llm fetch": ["--model", "{missing}"],
}
COMMANDS = list(BASE)
# Never dropped: without them a build would start a Prefect server (15-45 s), a command would load
# the embedding model, and `serve` would take the default port another test may hold.
KEPT = {"--no-prefect", "--embeddings", "hashing", "--port", "{port}"}
# Flags whose any-string value would reach the network or a model download (a pinned model name,
# or an empty --local-llm meaning the default model): they only get hostile paths.
PATH_ONLY = {"--local-llm", "--model", "--cache-dir", "--embeddings-model"}

CONTROL = ["\x1b[2J", "\x1b]0;owned\x07", "\x9b31m", "\r", "a\nb", "\t", "\x7f", "\u202etxt.exe", "\x08" * 8]
HOSTILE_TEXT = [
    "",
    " ",
    "-",
    "--",
    "---",
    "=",
    "%s%n%x",
    "{0}{}",
    "'; DROP TABLE chunks; --",
    "../../..",
    "~",
    "$(touch pwned)",
    "`id`",
    "x" * 20000,
    "é" * 3000,
    "\U0001f600" * 500,
    "\udcff",
    "nan",
    *CONTROL,
]
HOSTILE_NUMBERS = [
    "-1",
    "0",
    "-0",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "1e3",
    "0x10",
    "1_000",
    "９",
    "٣",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "1" + "0" * 5000,
    "2.5",
    "",
]
INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"caf\xe9"]
UNKNOWN_FLAGS = [
    "--bogus",
    "--workspac",
    "-Z",
    "--=",
    "---x",
    "--no-prefect=yes",
    "-w",
    "--json=1",
    "--help=x",
    "-qq",
    "--format",
    "--debug=no",
    "--\x1b[2J",
]
# Paths planted in each case's folder (`plant_paths`).
TRAPS = [
    "fifo",
    "dir",
    "missing",
    "link_file",
    "link_dir",
    "loop",
    "dev_zero",
    "empty",
    "garbage",
    "big",
    "badutf8",
    "ws_file",
    "nested/missing/deep",
]


@dataclass
class Case:
    """One fuzz case: the argv after `nkw` (str or raw bytes), an optional config file, a damage."""

    number: int
    family: str
    command: str
    argv: list[str | bytes]
    config: bytes | None = None
    damage: tuple[str, str] | None = None  # (kind, workspace-relative path or a whole-workspace kind)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        shown = [repr(a) if len(a) <= 60 else f"{a[:40]!r}...({len(a)})" for a in self.argv[:40]]
        parts = [f"#{self.number} {self.family}: nkw {' '.join(shown)}{' ...' * (len(self.argv) > 40)}"]
        if self.damage:
            parts.append(f"damage {self.damage[0]} at {self.damage[1]}")
        if self.config is not None:
            parts.append(f"config {self.config[:300]!r}")
        return "; ".join(parts + self.notes)


@functools.cache
def options_of(command: str) -> dict[str, argparse.Action]:
    """The long option -> action of one (sub)command, from the real parser."""
    parser = build_parser()
    for word in command.split():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return {
        a.option_strings[-1] if a.option_strings[-1].startswith("--") else a.option_strings[0]: a
        for a in parser._actions
        if a.option_strings and "--help" not in a.option_strings
    }


def hostile_value(rng: random.Random, flag: str, action: argparse.Action) -> str | bytes:
    """A value for `flag` that a careless command would trip on."""
    if flag in PATH_ONLY:
        return "{" + rng.choice([t for t in TRAPS if t != "empty"]) + "}"
    if action.type in (int, float):
        return rng.choice(HOSTILE_NUMBERS)
    draw = rng.random()
    if draw < 0.35:
        return "{" + rng.choice(TRAPS) + "}"
    if draw < 0.45:
        return rng.choice(INVALID_UTF8)
    if draw < 0.55 and "url" in flag:
        return rng.choice(
            [
                "http://127.0.0.1:9/v1",
                "http://[::1",
                "file:///etc/passwd",
                "http://127.0.0.1:0",
                "http://user:pw@127.0.0.1:9/v1?x=\x1b[2J",
                "unix:///tmp/x",
                "http://127.0.0.1:99999/v1",
            ]
        )
    return rng.choice(HOSTILE_TEXT)


def mutate(rng: random.Random, command: str, argv: list[str | bytes]) -> list[str]:
    """Apply one seeded mutation to `argv` in place; return what was done (for the report)."""
    options = options_of(command)
    kind = rng.choice(
        ["option", "option", "option", "unknown", "positional", "drop", "bytes", "repeat", "flag_value"]
    )
    if kind == "option" or (kind in ("positional", "drop", "bytes") and not argv):
        flag = rng.choice(sorted(options))
        action = options[flag]
        if action.nargs == 0:  # a switch: give it a value anyway, or just turn it on
            argv.append(f"{flag}={rng.choice(HOSTILE_TEXT[:6])}" if rng.random() < 0.3 else flag)
        else:
            argv += [flag, hostile_value(rng, flag, action)]
        return [f"option {flag}"]
    if kind == "unknown":
        argv.insert(rng.randrange(len(argv) + 1), rng.choice(UNKNOWN_FLAGS))
        return ["unknown flag"]
    if kind == "positional":
        slots = [
            i
            for i, a in enumerate(argv)
            if isinstance(a, str)
            and not a.startswith("-")
            and (i == 0 or not str(argv[i - 1]).startswith("-"))
        ]
        if slots:
            argv[rng.choice(slots)] = rng.choice(HOSTILE_TEXT + ["{" + t + "}" for t in TRAPS])
        return ["positional"]
    if kind == "drop":
        droppable = [i for i, a in enumerate(argv) if a not in KEPT]
        if droppable:
            del argv[rng.choice(droppable)]
        return ["dropped a token"]
    if kind == "bytes":
        index = rng.randrange(len(argv))
        token = argv[index]
        raw = token if isinstance(token, bytes) else token.encode("utf-8", "surrogateescape")
        argv[index] = raw + rng.choice(INVALID_UTF8)
        return ["invalid utf-8"]
    if kind == "repeat":
        flag = rng.choice(sorted(options))
        value = [] if options[flag].nargs == 0 else ["x"]
        argv += [flag, *value] * rng.choice([50, 500])
        return [f"repeated {flag}"]
    # a value glued to a switch, or a flag where a value belongs
    argv.append(rng.choice(["--workspace=", "--out=", "--config=", "-w=", "--questions"]))
    return ["flag value"]


def argv_case(rng: random.Random, number: int) -> Case:
    """A command with one to three hostile mutations of its valid invocation."""
    command = rng.choice(COMMANDS)
    argv: list[str | bytes] = list(BASE[command])
    notes: list[str] = []
    for _ in range(rng.randint(1, 3)):
        notes += mutate(rng, command, argv)
    if rng.random() < 0.1:  # before the command name: the top-level parser's turn
        return Case(
            number, "argv", command, [rng.choice(UNKNOWN_FLAGS), *command.split(), *argv], notes=notes
        )
    return Case(number, "argv", command, [*command.split(), *argv], notes=notes)


def config_fields() -> list[tuple[str, str, object]]:
    """(section, field, annotation) of every settings field, walked from the models."""
    return [
        (section, name, info.annotation)
        for section, sec in Settings.model_fields.items()
        for name, info in sec.annotation.model_fields.items()
    ]


TOML_VALUES = [
    "nan",
    "inf",
    "-inf",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "-1",
    "0",
    '"x"',
    '""',
    "true",
    "[]",
    "[1, 2]",
    "{}",
    "{a = 1}",
    '"\\u001b[2J"',
    '"1.2.3GB"',
    "1979-05-27",
    '"' + "y" * 5000 + '"',
    "0.0",
    '"http://[::1"',
    '"127.0.0.1:9"',
]
BROKEN_TOML = [
    b"[build",
    b"a = ",
    b"= 1",
    b"[[build]]\nconcurrency = 1",
    b"build = 5",
    b'llm = "x"',
    b"\xff\xfe[build]",
    b"\xef\xbb\xbf[build]\nconcurrency = 1",
    b"[build]\nconcurrency = 1\nconcurrency = 2",
    b"a = " + b"[" * 5000 + b"]" * 5000,
    b"a = " + b"{b = " * 3000 + b"1" + b"}" * 3000,
    b"[" + b"a." * 3000 + b"b]",
    b'x = "\x00"',
    b"[unknown_section]\nk = 1",
    b"",
    b"\n" * 1000,
]


def config_text(rng: random.Random) -> bytes:
    """A TOML file: real sections and keys with wrong, huge or non-finite values, or broken TOML."""
    if rng.random() < 0.3:
        return rng.choice(BROKEN_TOML)
    fields = config_fields()
    lines: dict[str, list[str]] = {}
    for _ in range(rng.randint(1, 4)):
        section, name, _ = rng.choice(fields)
        if rng.random() < 0.15:
            section = rng.choice([section, "nope", "build.extra", "llm.deep.er"])
            name = rng.choice([name, "unknown_key", "\u202ekey", '"quoted key"'])
        lines.setdefault(section, []).append(f"{name} = {rng.choice(TOML_VALUES)}")
    return "".join(f"[{s}]\n" + "\n".join(v) + "\n" for s, v in lines.items()).encode()


# Commands that read a config file, with the base invocation the config is added to.
CONFIG_COMMANDS = ["build", "ask", "eval", "sql", "serve", "llm check", "report", "export", "view"]


def config_case(rng: random.Random, number: int) -> Case:
    """A valid command line whose `--config` file is generated (the commands that take one)."""
    command = rng.choice([c for c in CONFIG_COMMANDS if "--config" in options_of(c)])
    return Case(
        number,
        "config",
        command,
        [*command.split(), *BASE[command], "--config", "{config}"],
        config=config_text(rng),
    )


DAMAGE_KINDS = [
    "truncate",
    "empty",
    "garbage",
    "json",
    "fifo",
    "dir",
    "dev_zero",
    "missing",
    "swap",
    "link_out",
]
WHOLE_DAMAGE = [
    "no_tables",
    "tables_file",
    "root_file",
    "lock_fifo",
    "lock_dir",
    "lock_live",
    "lock_garbage",
    "empty_root",
]
WORKSPACE_COMMANDS = ["inspect", "sql", "ask", "view", "export", "report", "remove", "build", "eval", "serve"]
SQL_QUERIES = [
    "SELECT count(*) FROM chunks",
    "SELECT * FROM documents",
    "SELECT * FROM entities LIMIT 3",
    "SELECT * FROM qa_answers",
    "SHOW TABLES",
    "SELECT * FROM eval_runs",
]


def workspace_case(rng: random.Random, number: int, files: list[str]) -> Case:
    """A valid command line on a copy of the workspace with one or two files damaged."""
    command = rng.choice(WORKSPACE_COMMANDS)
    argv = [*command.split(), *BASE[command]]
    if command == "sql":
        argv[1] = rng.choice(SQL_QUERIES)
    if rng.random() < 0.2:
        damage = (rng.choice(WHOLE_DAMAGE), ".")
    else:
        damage = (rng.choice(DAMAGE_KINDS), rng.choice(files))
    return Case(number, "workspace", command, argv, damage=damage)


def plant_paths(folder: Path, sentinel: Path) -> dict[str, str]:
    """Make the trap files of one case's folder; `{name}` -> its path."""
    made = {name: str(folder / name) for name in TRAPS}
    os.mkfifo(folder / "fifo")
    (folder / "dir").mkdir()
    (folder / "link_file").symlink_to(sentinel)
    (folder / "link_dir").symlink_to(sentinel.parent)
    (folder / "loop").symlink_to(folder / "loop2")
    (folder / "loop2").symlink_to(folder / "loop")
    (folder / "dev_zero").symlink_to(Path(os.devnull).with_name("zero"))
    (folder / "empty").write_bytes(b"")
    (folder / "garbage").write_bytes(random.Random(0).randbytes(4096))
    with open(folder / "big", "wb") as handle:  # sparse: 64 MiB that cost no disk
        handle.truncate(64 * 2**20)
    (folder / "badutf8").write_bytes(b"\xff\xfe bad \xc3\x28 text\n" * 10)
    (folder / "ws_file").write_text("a file where a folder belongs\n")
    return made
