"""Exit statuses and the user's-mistake error shared by every command (no imports: the parser and
`nkw --help` need them before any command loads)."""

EXIT_USAGE = 2
EXIT_FAILED = 1


class UserError(Exception):
    """A mistake the user can fix; printed as one line."""
