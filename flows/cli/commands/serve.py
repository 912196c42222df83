"""`nkw serve`: a local HTTP API over a workspace (POST /ask, GET /documents, GET /health), the
documents' views at `/` and the API docs at `/docs`; a ready line with the URL, then an access log."""

from __future__ import annotations

import argparse
import sys

from flows.answer_questions import QueryEngine
from flows.cli.commands.common import UserError, llm_client, settings_from, workspace_from
from flows.serving.guard import make_server
from flows.serving.serve import create_app


def run(args: argparse.Namespace) -> int:
    if args.serve_concurrency < 1 or args.queue < 0:
        raise UserError("--concurrency must be at least 1 and --queue at least 0")
    settings = settings_from(args)
    workspace = workspace_from(args)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"notice: serving on {args.host}: reachable from other machines; there is no authentication",
            file=sys.stderr,
        )
    llm = llm_client(settings, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)
    app = create_app(
        workspace,
        settings,
        engine,
        concurrency=args.serve_concurrency,
        queue=args.queue,
        preload=not args.lazy,
    )
    try:
        server = make_server(
            app,
            args.host,
            args.port,
            extra_hosts=args.allow_host or (),
            log_level="info" if args.verbose else "warning",
            access_log=True,
        )
        server.run()
    finally:
        if llm is not None:
            llm.close()
    return 0
