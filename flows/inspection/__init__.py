"""Inspection and views: `nkw inspect`, `nkw view`, `nkw export`, `nkw report`."""
