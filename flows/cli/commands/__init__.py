"""One module per `nkw` command, each with a `run(args) -> exit code`; flows.cli.main loads only the
one asked for."""
