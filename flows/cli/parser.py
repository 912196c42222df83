"""The `nkw` argument parser's manners: each command reports its own usage errors, names a misspelt
flag as unknown and suggests the nearest flag or command.

Only the standard library and the terminal sanitizer are imported here, so `nkw --help` and a
usage error never wait for the modules a command needs.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Iterable

from tasks.terminal import safe_text


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to a misspelt `word` (difflib's ratio of at least 0.6), or None."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def unrecognized(tokens: list[str], known_flags: Iterable[str] = ()) -> str:
    """The error for arguments no flag or positional took: the unknown flags (their values are not
    named: in `--fromat csv 'SELECT 1'` the query is fine), each with the nearest known flag."""
    flags = [token for token in tokens if token.startswith("-") and token != "-"]
    shown = flags or tokens
    message = f"unrecognized argument{'s' if len(shown) > 1 else ''} {' '.join(shown)}"
    # Compared without the dashes every long flag shares: `--foo` is not near `--format`.
    known = {flag[2:]: flag for flag in known_flags if flag.startswith("--")}
    near = (nearest(flag.split("=", 1)[0].lstrip("-"), known) for flag in flags)
    hints = [known[name] for name in near if name]
    if hints:
        message += f"; did you mean {' or '.join(dict.fromkeys(hints))}?"
    return message


class Parser(argparse.ArgumentParser):
    """argparse where a command's own parser reports its own mistakes.

    argparse hands a subcommand's unknown arguments back to the top-level parser, which then prints
    the top-level usage; and it checks required arguments before unknown ones, so
    `nkw eval --questoins q.jsonl` would say `--questions` is missing."""

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        namespace, extra = super().parse_known_args(args, namespace)
        if extra and self._subparsers is None:  # a command (not a group): its arguments end here
            self.error(unrecognized(extra, self._option_string_actions))
        return namespace, extra

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # argparse's own check, with the nearest choice: `nkw biuld` -> did you mean build?
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            hint = nearest(str(value), [str(choice) for choice in action.choices or ()])
            if hint is None:
                raise
            raise argparse.ArgumentError(action, f"{exc.message}; did you mean {hint}?") from None

    def _unknown_flags(self) -> list[str]:
        unknown = []
        for token in getattr(self, "_argv", []):
            if token == "--":
                break
            if not token.startswith("-") or token == "-" or self._negative_number_matcher.match(token):
                continue
            flag = token.split("=", 1)[0]
            if flag in self._option_string_actions:
                continue
            if flag.startswith("--") and any(o.startswith(flag) for o in self._option_string_actions):
                continue  # an abbreviation argparse accepts
            if not flag.startswith("--") and flag[:2] in self._option_string_actions:
                continue  # `-w/path` or `-n5`: a short flag with its value attached
            unknown.append(token)
        return unknown

    def error(self, message: str):
        unknown = self._unknown_flags() if "arguments are required" in message else []
        if unknown:
            message = unrecognized(unknown, self._option_string_actions)
        super().error(safe_text(message))  # it echoes arguments: `--\x1b[2J` must not clear the screen
