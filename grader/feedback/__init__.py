"""Feedback: comparisons and diffs, the catalogue of known mistakes, stand-ins, trace, the page and its figures."""
