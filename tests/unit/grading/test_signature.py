"""Score-file signatures: the course's key (made once, private, beside course.json) and HMAC-SHA256
over the canonical JSON of a score document."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat

import pytest

from grader.errors import GradeError
from grader.grading import signature
from grader.grading.signature import load_key, sign, verify

DOC = {
    "student": "ada",
    "assignment": "the-block",
    "status": "graded",
    "score": 2.5,
    "max_score": 4.0,
    "problems": [{"name": "gelu", "score": 2.5, "max_score": 4.0, "tests": ["t"]}],
    "note": "Zoë ✓",
}


@pytest.fixture
def course_json(tmp_path):
    path = tmp_path / "course" / "course.json"
    path.parent.mkdir()
    path.write_text("{}")
    return path


def test_the_key_is_made_once_beside_course_json_and_private(course_json):
    key = load_key(course_json, create=True)
    path = course_json.parent / ".grade-key"
    assert path.read_bytes() == key and len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(course_json, create=True) == key == load_key(course_json)  # kept, never remade
    assert sorted(p.name for p in course_json.parent.iterdir()) == [
        ".grade-key",
        "course.json",
    ]  # no temporary


def test_a_run_that_loses_the_race_to_make_the_key_uses_the_winners(course_json, monkeypatch):
    theirs = b"t" * 32
    real = signature.secrets.token_bytes

    def token_bytes(n):  # another run makes the key after ours found none
        (course_json.parent / ".grade-key").write_bytes(theirs)
        return real(n)

    monkeypatch.setattr(signature.secrets, "token_bytes", token_bytes)
    assert load_key(course_json, create=True) == theirs
    assert (course_json.parent / ".grade-key").read_bytes() == theirs  # never replaced
    assert sorted(p.name for p in course_json.parent.iterdir()) == [".grade-key", "course.json"]


def test_without_create_a_missing_key_is_an_error_and_none_is_made(course_json):
    with pytest.raises(GradeError, match=r"\.grade-key: not found"):
        load_key(course_json)
    assert not (course_json.parent / ".grade-key").exists()


def test_a_key_of_the_wrong_size_is_a_one_line_error(course_json):
    (course_json.parent / ".grade-key").write_bytes(b"short")
    with pytest.raises(GradeError, match=r"\.grade-key: not a grader key \(5 bytes, expected 32\)"):
        load_key(course_json, create=True)


def test_the_signature_is_hmac_sha256_over_the_canonical_json_without_it():
    key = os.urandom(32)
    signed = sign(DOC, key)
    body = json.dumps(
        DOC, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()
    assert signed["signature"] == "hmac-sha256:" + hmac.new(key, body, hashlib.sha256).hexdigest()
    assert verify(signed, key)
    reread = json.loads(
        json.dumps(dict(reversed(list(signed.items()))), indent=2)
    )  # re-indented, reordered
    assert verify(reread, key)
    assert sign(signed, key) == signed  # re-signing replaces, never nests


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: d.update(score=4.0),
        lambda d: d["problems"][0].update(score=4.0),
        lambda d: d.update(extra=1),
        lambda d: d.pop("note"),
        lambda d: d.pop("signature"),
        lambda d: d.update(signature=d["signature"].upper()),
        lambda d: d.update(
            signature=sign({**DOC, "score": 4.0}, b"k" * 32)["signature"]
        ),  # another doc's
        lambda d: d.update(signature=12),
    ],
)
def test_any_change_breaks_the_signature(tamper):
    doc = json.loads(json.dumps(sign(DOC, b"k" * 32)))
    tamper(doc)
    assert not verify(doc, b"k" * 32)


def test_another_key_does_not_verify():
    assert not verify(sign(DOC, b"k" * 32), b"j" * 32)
