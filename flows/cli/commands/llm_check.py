"""`nkw llm check`: can the configured OpenAI-compatible server be reached and does it serve the model."""

from __future__ import annotations

import argparse
import json
import sys

from flows.cli.commands.common import EXIT_FAILED, UserError, api_key, settings_from
from tasks.llm.client.server_check import check_server


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if not settings.llm.url:
        raise UserError("no LLM server configured: pass --llm-url URL (and --model NAME)")
    ok, message = check_server(settings.llm, api_key())
    if args.json:
        print(json.dumps({"ok": ok, "message": message}))
    else:
        print(message if ok else f"error: {message}", file=sys.stdout if ok else sys.stderr)
    return 0 if ok else EXIT_FAILED
