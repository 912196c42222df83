"""Query serving: question files for `nkw ask` and the `nkw serve` HTTP API."""
