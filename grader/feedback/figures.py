"""Figures a test attaches to the student's feedback page: titled heat maps, e.g. an attention
pattern."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


class Figures:
    """The ``figure`` fixture: ``figure(title, yours=..., reference=...)`` attaches heat maps to
    this test.

    Each keyword is a panel's name and its 1-D or 2-D array of numbers, or a function returning one.
    A function that raises (e.g. the student's code failed) leaves the whole figure out; it never
    fails the test. Figures of hidden tests are dropped unless course.json releases the hidden
    details.
    """

    def __init__(self) -> None:
        self.items: list[dict] = []

    def __call__(self, title: str, **panels: Any | Callable[[], Any]) -> None:
        arrays = {}
        for name, value in panels.items():
            try:
                raw = np.asarray(value() if callable(value) else value)
                if np.iscomplexobj(raw):  # its real part alone would misdraw it
                    return
                arrays[name] = raw.astype(np.float64)
            except Exception:  # StudentError, or a value that is not numbers
                return
            if arrays[name].ndim not in (1, 2):
                return
        self.items.append({"title": title, "panels": arrays})
