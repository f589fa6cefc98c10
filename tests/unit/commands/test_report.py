"""Score-file validation: fastjsonschema decides, jsonschema names the field; the two must agree."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from grader.errors import GradeError
from grader.report import schema, validate

STAMP = "2026-11-29T15:12:14.123+00:00"
SHA = "0123456789abcdef" * 4

SCORE = {
    "student": "ada",
    "assignment": "the-block",
    "status": "graded",
    "score": 2.5,
    "max_score": 4.0,
    "problems": [
        {"name": "gelu", "score": 2.5, "max_score": 4.0, "tests": ["test_a", "test_b"], "passed": 1}
    ],
    "tests": [
        {
            "name": "test_a",
            "problem": "gelu",
            "score": 2.5,
            "max_score": 2.5,
            "status": "passed",
            "output": "",
            "visibility": "visible",
        },
        {
            "name": "test_b",
            "problem": "gelu",
            "score": 0.0,
            "max_score": 1.5,
            "status": "failed",
            "output": "gelu of 0.5: differs",
            "visibility": "after_published",
            "kind": "mismatch",
            "diagnosis": "gelu.sigmoid",
        },
    ],
    "execution_time": 0.25,
    "graded_at": STAMP,
    "grader_version": "0.2.0",
    "submission_sha256": SHA,
    "course_sha256": SHA,
    "sandbox": "bwrap",
    "signature": "hmac-sha256:" + SHA,
    "submission_notes": ["read ada.ipynb"],
    "late": {
        "submitted_at": STAMP,
        "due": STAMP,
        "seconds_late": 0,
        "days_late": 0,
        "percent": 0,
        "penalty": 0,
        "raw_score": 2.5,
    },
}

# Values of every JSON type and the edges the schema's keywords draw (minimum 0, exclusiveMinimum 0,
# maximum 100, integer, minLength 1, enums, patterns).
ODD = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    0.5,
    -0.5,
    100,
    100.5,
    "",
    "x",
    "passed",
    "visible",
    SHA,
    SHA.upper(),
    SHA + "\n",
    STAMP,
    STAMP + "\n",
    "2026-11-29",
    [],
    ["x"],
    [""],
    {},
    {"x": 1},
    "graded",
    "grader_error",
    "hmac-sha256:" + SHA.upper(),
    "hmac-sha256:" + SHA + "\n",
    "hmac-sha256:" + SHA[:-1],
]


def _paths(value, path=()):
    """Every place in ``value``: (path, value there)."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,))


def _mutants():
    """SCORE with one place replaced by an odd value, one key removed, or one unknown key added."""
    for path, value in list(_paths(SCORE)):
        if not path:
            continue
        for odd in ODD:
            doc = copy.deepcopy(SCORE)
            parent = doc
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = copy.deepcopy(odd)
            yield f"{path}={odd!r}", doc
        if isinstance(value, dict):
            for key in value:
                doc = copy.deepcopy(SCORE)
                target = doc
                for step in path:
                    target = target[step]
                del target[key]
                yield f"{path} without {key}", doc
            doc = copy.deepcopy(SCORE)
            target = doc
            for step in path:
                target = target[step]
            target["surprise"] = 1
            yield f"{path} with surprise", doc
    for key in SCORE:
        doc = copy.deepcopy(SCORE)
        del doc[key]
        yield f"without {key}", doc
    yield "with surprise", {**SCORE, "surprise": 1}


def test_the_example_score_file_is_valid():
    jsonschema.validate(SCORE, schema())
    validate(SCORE)


def test_validate_agrees_with_jsonschema_on_every_mutant_and_names_the_field():
    checker = jsonschema.Draft202012Validator(schema())
    seen = {True: 0, False: 0}
    for name, doc in _mutants():
        valid = checker.is_valid(doc)
        seen[valid] += 1
        if valid:
            validate(doc)  # raises if fastjsonschema disagrees
            continue
        with pytest.raises(GradeError) as info:
            validate(doc, "scores/ada.json")
        message = str(info.value)
        assert message.startswith("scores/ada.json: field "), (name, message)
        assert "\n" not in message
        error = min(checker.iter_errors(doc), key=lambda e: list(e.path))
        assert repr(".".join(map(str, error.path)) or "(top level)") in message, (name, message)
    assert seen[True] > 100 and seen[False] > 300  # both sides exercised


def test_the_summary_shows_a_grader_error_in_red_never_as_a_score():
    import io

    from rich.console import Console

    from grader.report import summary_table

    flagged = {
        **copy.deepcopy(SCORE),
        "student": "bob",
        "status": "grader_error",
        "score": 0,
        "error": "the grader failed, not your code",
    }
    buffer = io.StringIO()
    summary_table(
        [SCORE, flagged],
        Console(file=buffer, force_terminal=True, color_system="standard", width=120),
        title="class",
    )
    lines = buffer.getvalue().splitlines()
    bob = next(line for line in lines if "bob" in line)
    assert bob.count("\x1b[1;31mgrader error") == 2 and "0/4" not in bob  # gelu and total, bold red
    assert "2.5/4" in next(line for line in lines if "ada" in line)


def test_a_batch_keeps_only_what_the_summary_shows_and_the_summary_is_the_same():
    import io

    from rich.console import Console

    from grader.report import summary_of, summary_table

    def printed(docs) -> str:
        buffer = io.StringIO()
        summary_table(docs, Console(file=buffer, width=120), title="class")
        return buffer.getvalue()

    blank = {**copy.deepcopy(SCORE), "student": "bo", "blank": True, "score": 0}
    kept = [summary_of(doc) for doc in (SCORE, blank)]
    assert printed(kept) == printed([SCORE, blank]) and "blank" in printed(kept)
    assert "tests" not in kept[0] and len(json.dumps(kept[0])) < len(json.dumps(SCORE)) / 2


def test_a_long_summary_prints_in_pages_as_wide_as_its_widest_row(monkeypatch):
    import io

    from rich.console import Console

    from grader import report

    monkeypatch.setattr(report, "TABLE_ROWS", 2)
    docs = [
        {**copy.deepcopy(SCORE), "student": name}
        for name in ("a", "a-much-longer-name", "b", "c", "d")
    ]
    buffer = io.StringIO()
    report.summary_table(docs, Console(file=buffer, width=120), title="class")
    lines = buffer.getvalue().splitlines()
    assert lines[0].startswith("class") and buffer.getvalue().count("class") == 1
    assert sum("student" in line for line in lines) == 3  # three pages, each with its header
    assert len({len(line) for line in lines[1:]}) == 1  # aligned across the pages
