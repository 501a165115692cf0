"""Audit tools: read topics back, compare them with the offline fold, report differences."""
