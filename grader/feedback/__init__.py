"""Feedback: comparisons and diffs, the catalogue of known mistakes, trace, the page and its
figures."""
