"""The `nkw` command line: argument parsing, one module per command, output formatting."""
