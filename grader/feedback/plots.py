"""The class report's histograms: matplotlib draws them as SVG, inlined in the page (nothing fetched
on view).

matplotlib is the ``report`` extra's (instructors only) and is imported here, when a plot is drawn.
No pyplot: a ``Figure`` of its own per plot, so nothing is left in matplotlib's global state, and
the SVG is the same on every run (no date in its metadata, a fixed hash salt for its element ids).
"""

from __future__ import annotations

import io
from typing import Sequence

BAR, EDGE = "#3b6fb6", "#ffffff"


def histogram_svg(values: Sequence[float], top: float, title: str, bins: int = 10) -> str:
    """A histogram of ``values`` (points from 0 to ``top``) as an ``<svg>`` element, its text as
    text.

    :raises GradeError: matplotlib is not installed (the ``report`` extra).
    """
    try:
        import matplotlib
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        from grader.errors import GradeError

        raise GradeError(
            "--html: the class report's plots need matplotlib: pip install "
            "'transformer-block-grader[report]'"
        ) from None
    with matplotlib.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": f"grade:{title}", "font.size": 9}
    ):
        figure = Figure(figsize=(3.6, 2.2), layout="constrained")
        axes = figure.add_subplot()
        axes.hist(list(values), bins=bins, range=(0, top or 1), color=BAR, edgecolor=EDGE)
        axes.set_title(title, fontsize=10)
        axes.set_xlabel("points")
        axes.set_ylabel("students")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.spines[["top", "right"]].set_visible(False)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # no XML declaration or DOCTYPE inside the HTML page
