"""How two arrays differ, in words and numbers: the ``detail`` of a failed comparison.

Pure functions on float64 arrays of one shape; nothing here decides a verdict (see
:mod:`grader.feedback.compare`).
"""

from __future__ import annotations

import numpy as np

EXCERPT_ROWS = 4  # rows of the excerpt, starting at the first differing row
EXCERPT_COLUMNS = 8  # columns of the excerpt, a window around the first differing column


def index(flat: int, shape: tuple[int, ...]) -> str:
    """The index of flat position ``flat`` in an array of ``shape``, written ``[i, j]``."""
    return "[" + ", ".join(str(i) for i in np.unravel_index(flat, shape)) + "]" if shape else "[]"


def describe(got: np.ndarray, expected: np.ndarray) -> str:
    """One line: the shape and dtype of each, e.g. ``yours: shape (2, 4), float32; expected: shape
    (2, 4), float64``."""
    return (
        f"yours: shape {got.shape}, {got.dtype}; expected: shape {expected.shape}, {expected.dtype}"
    )


def values(
    got: np.ndarray, expected: np.ndarray, off: np.ndarray, rtol: float, atol: float, allowed: float
) -> str:
    """The numbers of a value mismatch: how many entries differ, the largest error against the
    tolerance, the first differing index, and an excerpt with the differing entries marked.

    :param got, expected: float64 arrays of one shape, finite where it matters.
    :param off: boolean array of the entries outside ``allowed`` (at least one).
    :param allowed: ``atol + rtol · max |expected|`` (:func:`grader.feedback.compare.allowed`).
    """
    diff = np.abs(got - expected)
    worst = int(np.argmax(np.where(off, diff, -1.0)))
    first = int(np.flatnonzero(off)[0])
    lines = [
        f"{int(off.sum())} / {off.size} entries differ by more than {allowed:.3g} (rtol {rtol:g} "
        "of the "
        f"largest expected magnitude, plus atol {atol:g}); max abs error {diff.flat[worst]:.3g} at "
        f"{index(worst, off.shape)}: yours {got.flat[worst]:.6g}, expected "
        f"{expected.flat[worst]:.6g}"
    ]
    lines.append(
        f"first difference at {index(first, off.shape)}: yours {got.flat[first]:.6g}, "
        f"expected {expected.flat[first]:.6g}"
    )
    return "\n".join(lines + [excerpt(got, expected, off)])


def non_finite(got: np.ndarray, bad: np.ndarray) -> str:
    """Where NaN and inf first appear in ``got`` (``bad`` marks the entries that should be
    finite)."""
    parts = []
    for name, mask in [
        ("NaN", np.isnan(got)),
        ("inf", np.isposinf(got)),
        ("-inf", np.isneginf(got)),
    ]:
        mask = mask & bad
        if not mask.any():
            continue
        text = (
            f"{name} at {int(mask.sum())} of {mask.size} entries, first at "
            f"{index(int(np.flatnonzero(mask)[0]), got.shape)}"
        )
        if got.ndim > 1:
            rows = sorted({tuple(int(i) for i in at[:-1]) for at in np.argwhere(mask)})
            shown = ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows[:6])
            text += f", in row{'s' if len(rows) > 1 else ''} {shown}{' …' if len(rows) > 6 else ''}"
        parts.append(text)
    return "; ".join(parts)


def _cell(value: float, marked: bool, decimals: int = 3) -> str:
    return f"{value:.{decimals}f}" + ("*" if marked else " ")


def decimals_to_tell(got: np.ndarray, expected: np.ndarray, least: int = 3, most: int = 10) -> int:
    """The fewest decimals (``least`` to ``most``) at which each entry of ``got`` prints unlike its
    ``expected``: a near miss outside the tolerance must not read as equal numbers."""
    for decimals in range(least, most + 1):
        if all(f"{g:.{decimals}f}" != f"{e:.{decimals}f}" for g, e in zip(got, expected)):
            return decimals
    return most


def excerpt(got: np.ndarray, expected: np.ndarray, off: np.ndarray) -> str:
    """A few rows of expected over yours, 3 decimals (more when a differing entry would print the
    same), ``*`` after each entry outside the tolerance.

    Arrays of more than 2 dimensions are shown as rows of their last axis; 0-d and 1-d as one row.
    """
    shape = expected.shape
    width = shape[-1] if shape else 1
    rows_e, rows_g, rows_o = (a.reshape(-1, width) for a in (expected, got, off))
    first = int(np.flatnonzero(rows_o)[0]) if rows_o.any() else 0
    row0, col0 = divmod(first, width)
    col0 = max(0, min(col0 - EXCERPT_COLUMNS // 2, width - EXCERPT_COLUMNS))
    cols = slice(col0, col0 + EXCERPT_COLUMNS)
    rows = range(row0, min(row0 + EXCERPT_ROWS, rows_e.shape[0]))
    labels = {
        r: (index(r * width, shape).rsplit(",", 1)[0] + ", :]" if len(shape) > 1 else "[:]")
        for r in rows
    }
    window = (slice(rows.start, rows.stop), cols)
    marked = rows_o[window]  # the differing entries the excerpt shows
    decimals = decimals_to_tell(rows_g[window][marked], rows_e[window][marked])
    cells = [
        [_cell(v, o, decimals) for v, o in zip(block[r, cols], rows_o[r, cols])]
        for r in rows
        for block in (rows_e, rows_g)
    ]
    size = max(len(c) for row in cells for c in row)
    pad = max(len(label) for label in labels.values())
    note = (
        ""
        if width <= EXCERPT_COLUMNS
        else f", columns {cols.start} to {min(cols.stop, width) - 1} of {width}"
    )
    more = rows_e.shape[0] - rows.stop
    lines = [f"excerpt ({decimals} decimals, * = outside the tolerance{note}):"]
    for i, r in enumerate(rows):
        for j, name in enumerate(("expected", "yours   ")):
            label = labels[r] if j == 0 else ""
            lines.append(
                f"  {label:<{pad}}  {name} " + " ".join(c.rjust(size) for c in cells[2 * i + j])
            )
    if more > 0:
        lines.append(f"  … {more} more row{'s' if more > 1 else ''}")
    return "\n".join(lines)
