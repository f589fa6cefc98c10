"""Pairs of submissions whose code is suspiciously alike, for the instructor's class report only
(``grade report --similarity SUBMISSIONS``; never in a student's page or score file).

copydetect (the ``report`` extra) fingerprints each student's code as MOSS does (winnowing over
Pygments tokens, so renamed variables and changed comments do not hide a copy). A student's code is
their course modules as the grader reads the hand-in (:mod:`grader.intake.collect`: folders, zips,
notebooks), in course order; the released stubs are the boilerplate, so the signatures and
docstrings everyone was given match nobody.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.course.manifest import Course
from grader.errors import GradeError, StudentError
from grader.intake import collect, pysource

NOISE = 25  # copydetect's defaults: matches shorter than 25 tokens' characters are noise
SHOWN = 0.33  # copydetect's display threshold: pairs less alike than this are not listed
MAX_PAIRS = 50  # listed at most (the most alike); the report says how many there were


@dataclass(frozen=True)
class Pair:
    """Two students and the share of each one's code (beyond the stubs) found in the other's."""

    a: str
    b: str
    share_a: float
    share_b: float

    @property
    def similarity(self) -> float:
        return max(self.share_a, self.share_b)


def _code(course: Course, folder: Path) -> str:
    """A submission's code as the grader runs it, as one text: the course modules in course order,
    then every other ``.py`` file of the folder graded (a helper module beside them, in a
    subfolder), by path. A copy moved into a helper that the modules import is still compared. Links
    are never followed (the folder is the grader's own copy, which has none); a missing module is no
    text."""
    modules = [folder / f"{module}.py" for module in course.modules]
    others = sorted(p for p in folder.rglob("*.py") if p not in modules)
    parts = []
    for path in modules + others:
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            try:  # as Python reads it: a Latin-1 copy of a UTF-8 one is a copy
                parts.append(pysource.decode(path.name, data))
            except StudentError:
                parts.append(data.decode("utf-8", errors="replace"))
    return "\n".join(parts)


@dataclass(frozen=True)
class Similarity:
    """What the report says of the class's code: the ``pairs`` listed (the most alike, at most
    ``limit``), how many pairs were at least ``threshold`` alike (``total``) of the ``compared``,
    and the class's ``baseline``: the median likeness of all pairs compared (the course's own
    boilerplate beyond the stubs, and how alike right answers are, make it above 0)."""

    pairs: tuple[Pair, ...]
    total: int
    compared: int
    threshold: float
    baseline: float
    limit: int


def pairs(
    course: Course, submissions: Path, *, shown: float = SHOWN, limit: int = MAX_PAIRS
) -> list[Pair]:
    """The pairs of ``submissions`` (a folder of them, as ``grade autograde`` takes it) at least
    ``shown`` alike, most alike first, at most ``limit``.

    :raises GradeError: copydetect is not installed, or the folder holds no submissions.
    """
    return list(compare(course, submissions, shown=shown, limit=limit).pairs)


def compare(
    course: Course, submissions: Path, *, shown: float = SHOWN, limit: int = MAX_PAIRS
) -> Similarity:
    """Every pair of ``submissions`` compared: the most alike listed, with the count and the
    class's baseline (see :class:`Similarity`).

    :raises GradeError: copydetect is not installed, or the folder holds no submissions.
    """
    try:
        from copydetect import CodeFingerprint, compare_files
    except ImportError:
        raise GradeError(
            "--similarity needs copydetect: pip install 'transformer-block-grader[report]'"
        ) from None
    work = Path(tempfile.mkdtemp(prefix="grade-similarity-"))
    try:
        subs, _ = collect.gather(course, work / "collected", submissions=submissions)
        codes = {s.student: _code(course, s.folder) for s in subs if not s.error}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def fingerprint(text: str, boilerplate=None):
        # the file name only tells Pygments the language; win_size 1 as copydetect fingerprints its
        # boilerplate
        return CodeFingerprint(
            "submission.py", NOISE, 1, boilerplate=boilerplate, fp=io.StringIO(text)
        )

    import numpy as np

    stubs = np.unique(
        np.array(sorted(fingerprint(_code(course, course.exercises)).hashes), dtype=np.int64)
    )
    prints = {
        student: fingerprint(text, stubs) for student, text in sorted(codes.items()) if text.strip()
    }
    students = list(prints)
    found, likeness = [], []
    for i, a in enumerate(students):
        for b in students[i + 1 :]:
            _, (share_a, share_b), _ = compare_files(prints[a], prints[b])
            pair = Pair(a, b, float(share_a), float(share_b))
            likeness.append(pair.similarity)
            if pair.similarity >= shown:
                found.append(pair)
    found.sort(key=lambda p: (-p.similarity, p.a, p.b))
    baseline = float(np.median(likeness)) if likeness else 0.0
    return Similarity(tuple(found[:limit]), len(found), len(likeness), shown, baseline, limit)
