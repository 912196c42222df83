"""Building: plan a corpus against the manifest and run each document's stage graph."""
