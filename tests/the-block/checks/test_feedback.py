"""Issue 14's "Done when", as `make test` checks it: every single fault of mutants.FAULTS and the
reference, checked with `grade check --json` in a student's copy of the course (no solutions, no
catalogue's variants, no hidden suites: the diagnoses come from tests/public/mistakes.json alone).
Catalogued faults are named, no diagnosis names another mistake, and the uncatalogued faults'
messages say what to change. `make feedback` (tests/bench/feedback.py) makes the same measurement
from a real release in a fresh venv."""

from __future__ import annotations

import sys

import pytest
from conftest import PROJECT, students_copy

sys.path.insert(0, str(PROJECT / "tests" / "bench"))

import feedback  # noqa: E402


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> feedback.Figures:
    root = students_copy(tmp_path_factory.mktemp("students-copy") / "release")
    results = feedback.check_all(
        feedback.checker([sys.executable, "-m", "grader"], root), root / "subs", root / "out"
    )
    fig = feedback.figures(results)
    print("\n".join(fig.lines) + "\n" + fig.summary())
    return fig


def test_every_catalogued_fault_that_fails_a_public_test_is_named_from_the_stored_outputs(measured):
    assert measured.named == measured.catalogued, "\n".join(
        line for line in measured.lines if "MISSED" in line
    )


def test_no_diagnosis_names_a_mistake_the_submission_did_not_make(measured):
    assert measured.wrong == 0, "\n".join(
        line for line in measured.lines if "WRONG" in line or "DIAGNOSED" in line
    )


def test_the_uncatalogued_faults_feedback_names_the_aspect_to_change(measured):
    assert measured.hinted >= feedback.WORDS_SHARE * measured.uncatalogued, "\n".join(
        line for line in measured.lines if "NO HINT" in line
    )
