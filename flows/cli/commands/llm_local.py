"""`nkw llm local` and `nkw llm fetch`: a GGUF model served by llama.cpp on this machine.

`fetch` downloads (or finds in the cache) and verifies a pinned model. `local` also serves it on
127.0.0.1 in the foreground and prints the `--llm-url` and `--model` the other commands take;
Ctrl-C stops the server. The model cache is `--cache-dir`, else $NKW_MODEL_CACHE, else the
user's cache folder.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable

from flows.cli.commands.common import EXIT_FAILED, UserError, settings_from
from tasks.llm.local.model_files import ModelError, ResolvedModel, default_cache_dir, resolve_model
from tasks.llm.local.server import LocalServer, LocalServerError, ServerOptions, free_port


def cache_dir_from(args: argparse.Namespace) -> Path:
    chosen = getattr(args, "cache_dir", None) or os.environ.get("NKW_MODEL_CACHE")
    return Path(chosen).expanduser() if chosen else default_cache_dir()


def model_from(args: argparse.Namespace, settings) -> ResolvedModel:
    spec = getattr(args, "local_model", None) or settings.local_llm.path or settings.local_llm.model
    try:
        return resolve_model(spec, cache_dir_from(args), log=lambda line: print(line, file=sys.stderr))
    except ModelError as exc:
        raise UserError(str(exc)) from None


def server_options(args: argparse.Namespace, settings, model: ResolvedModel) -> ServerOptions:
    flags = {"port": args.port, "context": args.context, "parallel": args.parallel}
    # Validated again so the flags obey the config's bounds (a ValueError names the field).
    local = type(settings.local_llm).model_validate(
        {**settings.local_llm.model_dump(), **{k: v for k, v in flags.items() if v is not None}}
    )
    return ServerOptions(
        model_path=str(model.path), alias=model.alias, context=local.context, parallel=local.parallel,
        decode_threads=local.decode_threads, prompt_threads=local.prompt_threads,
        port=local.port or free_port(),
    )  # fmt: skip


def xllamacpp_installed() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


def _prepared(args: argparse.Namespace, settings) -> ServerOptions:
    model = model_from(args, settings)
    try:  # options are checked first: a wrong option is wrong with or without xllamacpp installed
        options = server_options(args, settings, model)
    except ValueError as exc:
        raise UserError(f"invalid server option: {' '.join(str(exc).split())[:200]}") from None
    if not xllamacpp_installed():
        raise UserError("the local server needs xllamacpp: pip install -e '.[local]' (or make check-llm)")
    return options


def run_with_local_server(args: argparse.Namespace, command: Callable[[argparse.Namespace], int]) -> int:
    """`nkw build|ask|eval|... --local-llm [MODEL]`: the command runs against a server started for it."""
    if getattr(args, "llm_url", None) or getattr(args, "model", None):
        raise UserError("--local-llm starts its own server and names its model: drop --llm-url and --model")
    settings = settings_from(args)
    args.local_model = args.local_llm or None
    args.port = args.context = args.parallel = None
    options = _prepared(args, settings)
    print(f"loading {Path(options.model_path).name} ...", file=sys.stderr)
    try:
        with LocalServer(options, settings.local_llm.startup_timeout_s) as server:
            args.llm_url, args.model = server.url, options.alias
            args.llm_grammar = "llguidance"  # the server NKW starts is built with llguidance
            return command(args)
    except LocalServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if not args.serve:
        model = model_from(args, settings)
        info = {"path": str(model.path), "model": model.alias, "pinned": model.pinned}
        print(json.dumps(info) if args.json else model.path)
        return 0
    options = _prepared(args, settings)
    model = Path(options.model_path)
    print(f"loading {model.name} ...", file=sys.stderr)
    try:
        with LocalServer(options, settings.local_llm.startup_timeout_s) as server:
            if args.json:
                served = {"llm_url": server.url, "model": options.alias, "context": options.context,
                          "parallel": options.parallel, "grammar": "llguidance"}  # fmt: skip
                print(json.dumps(served), flush=True)
            else:
                print(
                    f"serving {options.alias} (context {options.context} x {options.parallel} slot(s)); "
                    "Ctrl-C stops it\n"
                    f"use: --llm-url {server.url} --model {options.alias}\n"
                    'and in the config: [llm] grammar = "llguidance" (the whole schema, string limits kept)',
                    flush=True,
                )
            while server.is_alive():
                time.sleep(0.5)
            tail = server.log_tail()
        print(f"error: the local model server stopped; {tail}", file=sys.stderr)
        return EXIT_FAILED
    except LocalServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # the server is already stopped by the context manager
        print("stopped", file=sys.stderr)
        return 0
