"""LTI 1.3 that real platforms accept (issue 29, item 3), against lms_platforms.LtiPlatform
(written from RFC 6749/6750/7523/7638, AGS 2.0 section 3.4, Canvas's scores_controller and
Moodle's keyset handling):

- ``grade push lti-key`` writes a key pair and the JWKS to register, and the client assertion's
  ``kid`` is the key's RFC 7638 thumbprint, so a platform reading the tool's key set accepts it
  (one that needs a kid refuses an assertion without);
- the token is renewed before ``expires_in`` runs out, and on a 401 ``invalid_token``;
- only what changed is posted (the push ledger), with Canvas's ``new_submission: false``, each
  score stamped later than the last one sent to that user (to the second, for Moodle).
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from datetime import datetime, timezone

import jwt
import pytest
import requests
from lms_platforms import CANVAS_EXT, LtiPlatform, thumbprint
from lms_servers import SCORE_SCOPE
from push_class import (
    CLIENT_ID,
    DIAGNOSIS,
    POINTS,
    lti_env,
    regrade,
    report,
    run,
    students,
    write_class,
)

from grader.commands import push_lti_key
from grader.errors import GradeError

USERS = students(7)
NOW = datetime(2026, 5, 3, 12, 0, 0, 123000, tzinfo=timezone.utc)


class Clock:
    """Seconds, advanced by hand: the tool's clock and the platform's, shared."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recording(LtiPlatform):
    """A platform that records each score's answer, advances the shared clock ``step`` seconds
    after each score (a slow class), and may revoke every token after ``revoke_after`` scores, or
    refuse every token (``refuse_all``)."""

    step, revoke_after, refuse_all = 0.0, None, False

    def _score(self, query, headers, body):
        if self.refuse_all:
            answer = (
                401,
                {"WWW-Authenticate": 'Bearer error="invalid_token"'},
                {"error": "invalid_token"},
            )
        else:
            answer = super()._score(query, headers, body)
        self.answered = getattr(self, "answered", []) + [answer[0]]
        if self.step:
            self.clock.now += self.step
        if self.revoke_after is not None and self.answered.count(200) == self.revoke_after:
            self.expiry = dict.fromkeys(self.expiry, float("-inf"))
        return answer


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    """The tool's key, as grade push lti-key writes it: the folder."""
    out = tmp_path_factory.mktemp("keys") / "lti"
    assert push_lti_key.main(out=out) == 0
    return out


@pytest.fixture
def folder(tmp_path):
    return write_class(tmp_path / "course", USERS, pages=False)


def platform_for(key, **kwargs) -> Recording:
    jwks = json.loads((key / "jwks.json").read_text())
    return Recording(CLIENT_ID, jwks, list(USERS.values()), **kwargs)


def test_lti_key_writes_the_pair_and_the_jwks_whose_kid_is_the_rfc7638_thumbprint(key, capsys):
    jwk = json.loads((key / "jwk.json").read_text())
    assert json.loads((key / "jwks.json").read_text()) == {"keys": [jwk]}
    assert jwk["kid"] == thumbprint(jwk)  # computed here from RFC 7638
    assert {jwk["kty"], jwk["alg"], jwk["use"]} == {"RSA", "RS256", "sig"}
    assert "d" not in jwk and "p" not in jwk  # the public half only
    assert stat.S_IMODE(os.stat(key / "lti-key.pem").st_mode) == 0o600
    signed = jwt.encode({"x": 1}, (key / "lti-key.pem").read_text(), algorithm="RS256")
    assert jwt.decode(signed, jwt.PyJWK(jwk).key, algorithms=["RS256"]) == {"x": 1}
    with pytest.raises(GradeError, match="never replaced"):
        push_lti_key.main(out=key)


def test_lti_key_refuses_a_folder_inside_the_course(folder):
    with pytest.raises(GradeError, match="inside the course folder"):
        push_lti_key.main(out=folder / "keys")
    assert not (folder / "keys").exists()


def test_lti_key_on_the_command_line_prints_the_kid(tmp_path):
    from test_cli import grade

    result = grade("push", "lti-key", "--out", tmp_path / "k")
    jwk = json.loads((tmp_path / "k" / "jwk.json").read_text())
    assert result.exit_code == 0 and f"kid: {jwk['kid']}" in result.output, result.output


def test_a_platform_reading_a_key_set_needs_the_kid_and_the_push_sends_it(key, folder, capsys):
    platform = platform_for(key)
    try:
        claims = {
            "iss": CLIENT_ID,
            "sub": CLIENT_ID,
            "aud": platform.token_url,
            "iat": int(NOW.timestamp()),
            "exp": 4102444800,
            "jti": str(uuid.uuid4()),
        }
        private = (key / "lti-key.pem").read_text()
        without = requests.post(
            platform.token_url,
            timeout=10,
            data={
                "grant_type": "client_credentials",
                "scope": SCORE_SCOPE,
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": jwt.encode(claims, private, algorithm="RS256"),
            },
        )
        assert without.status_code == 401  # as Moodle's php-jwt says:
        assert without.json()["error_description"].startswith('"kid" empty')
        status = run(
            folder,
            "lti",
            lti_env(platform, key / "lti-key.pem", folder),
            lineitem=platform.lineitem,
            now=NOW,
        )
    finally:
        platform.close()
    out, err = capsys.readouterr()
    assert status == 0, out + err
    jwk = json.loads((key / "jwk.json").read_text())
    assert platform.kids[-1] == jwk["kid"] == thumbprint(jwk)
    assert sorted(platform.scores) == sorted(USERS.values())


def test_a_token_is_renewed_before_expires_in_runs_out(key, folder, capsys):
    clock = Clock()
    platform = platform_for(key, clock=clock, expires_in=100)
    platform.step = 30.0  # seven scores take 210 s: the first token cannot last
    try:
        status = run(
            folder,
            "lti",
            lti_env(platform, key / "lti-key.pem", folder),
            lineitem=platform.lineitem,
            now=NOW,
            clock=clock,
        )
    finally:
        platform.close()
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert platform.answered == [200] * 7  # never a 401: renewed before expiry
    assert len(platform.jtis) == 3  # at 1000, 1090 and 1180 s
    assert not any(t in out + err for t in platform.tokens)


def test_a_token_refused_with_invalid_token_is_renewed_once(key, folder, capsys):
    platform = platform_for(key)
    platform.revoke_after = 3  # the platform revokes every token after 3 scores
    try:
        status = run(
            folder,
            "lti",
            lti_env(platform, key / "lti-key.pem", folder),
            lineitem=platform.lineitem,
            now=NOW,
        )
    finally:
        platform.close()
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert platform.answered == [200, 200, 200, 401, 200, 200, 200, 200]
    assert len(platform.jtis) == 2 and sorted(platform.scores) == sorted(USERS.values())
    assert "7 posted, 0 unchanged, 0 failed" in out


def test_a_platform_refusing_every_token_stops_the_push_without_looping(key, folder, capsys):
    platform = platform_for(key)
    platform.refuse_all = True
    try:
        status = run(
            folder,
            "lti",
            lti_env(platform, key / "lti-key.pem", folder),
            lineitem=platform.lineitem,
            now=NOW,
        )
    finally:
        platform.close()
    out, err = capsys.readouterr()
    statuses = report(out + err)
    assert status == 1
    assert [statuses[s][0] for s in USERS] == ["failed"] * 3 + ["not tried"] * 4
    assert "401" in statuses["s01"][1] and platform.answered == [401] * 6  # one renewal each
    assert len(platform.jtis) == 4 and not any(t in out + err for t in platform.tokens)


def test_only_changed_scores_are_posted_as_regrades_stamped_later(key, folder, capsys):
    """Canvas: each post without new_submission false is a new attempt and every post adds its
    comment; a timestamp before the result's is a 400."""
    platform = platform_for(key)
    env = lti_env(platform, key / "lti-key.pem", folder)
    try:
        assert run(folder, "lti", env, lineitem=platform.lineitem, now=NOW) == 0
        first = {u: h[-1] for u, h in platform.scores.items()}
        capsys.readouterr()
        assert run(folder, "lti", env, lineitem=platform.lineitem, now=NOW) == 0  # nothing new
        out, _ = capsys.readouterr()
        assert "0 posted, 7 unchanged, 0 failed" in out
        assert all(len(h) == 1 for h in platform.scores.values())
        regrade(folder, "s03", {**POINTS, "gelu": 5})  # 75.125 now
        later = datetime(2026, 5, 3, 12, 5, tzinfo=timezone.utc)
        assert run(folder, "lti", env, lineitem=platform.lineitem, now=later) == 0
        out, _ = capsys.readouterr()
    finally:
        platform.close()
    assert "1 posted, 6 unchanged, 0 failed" in out
    assert report(out)["s03"][0] == "posted"
    s03 = platform.scores["303"]
    assert [s["scoreGiven"] for s in s03] == [85.125, 75.125]
    assert s03[1]["timestamp"] == "2026-05-03T12:05:00.000+00:00" > first["303"]["timestamp"]
    assert all(
        s[CANVAS_EXT] == {"new_submission": False} for h in platform.scores.values() for s in h
    )
    assert platform.attempts == {} and platform.refusals == []  # no new attempt, no 400
    assert all(len(c) == 1 for u, c in platform.comments.items() if u != "303")
    assert f"  {DIAGNOSIS}" in platform.comments["303"][1].splitlines()  # the diagnoses go too


def test_moodle_takes_a_changed_score_in_the_same_second(key, folder, capsys):
    """Moodle refuses (409) a score not after the stored one, to the second: a regrade pushed in
    the second of the last push is stamped the next second."""
    platform = platform_for(key, flavor="moodle")
    env = lti_env(platform, key / "lti-key.pem", folder)
    try:
        assert run(folder, "lti", env, lineitem=platform.lineitem, now=NOW) == 0
        regrade(folder, "s05", {**POINTS, "params": 0})
        assert run(folder, "lti", env, lineitem=platform.lineitem, now=NOW) == 0
    finally:
        platform.close()
    capsys.readouterr()
    assert platform.refusals == []
    assert [s["timestamp"] for s in platform.scores["305"]] == [
        "2026-05-03T12:00:00.123+00:00",
        "2026-05-03T12:00:01.000+00:00",
    ]


def test_the_dry_run_shows_what_changed_since_the_last_push(key, folder, capsys):
    platform = platform_for(key)
    try:
        assert (
            run(
                folder,
                "lti",
                lti_env(platform, key / "lti-key.pem", folder),
                lineitem=platform.lineitem,
                now=NOW,
            )
            == 0
        )
    finally:
        platform.close()
    regrade(folder, "s07", {**POINTS, "gelu": 0})
    capsys.readouterr()
    assert run(folder, "lti", {}, lineitem=platform.lineitem, now=NOW, yes=False) == 0
    out = capsys.readouterr().out
    would = [
        json.loads(line.split(": ", 2)[2])
        for line in out.splitlines()
        if line.startswith("would post: ")
    ]
    assert [o["userId"] for o in would] == ["307"]
    assert would[0]["timestamp"] == "2026-05-03T12:00:01.000+00:00"
    assert report(out)["s01"][0] == "unchanged"


def test_an_unreadable_ledger_is_said_and_set_aside(key, folder, capsys):
    (folder / "scores" / ".grade-push").write_text("{not json")
    platform = platform_for(key)
    try:
        assert (
            run(
                folder,
                "lti",
                lti_env(platform, key / "lti-key.pem", folder),
                lineitem=platform.lineitem,
                now=NOW,
            )
            == 0
        )
    finally:
        platform.close()
    assert "the push ledger is not readable" in capsys.readouterr().err
    assert (folder / "scores" / ".grade-push.unreadable").read_text() == "{not json"
    assert json.loads((folder / "scores" / ".grade-push").read_text())
