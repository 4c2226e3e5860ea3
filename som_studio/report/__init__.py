"""The report's content and plain-data writers (no Qt)."""
