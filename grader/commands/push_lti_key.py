"""``grade push lti-key --out DIR``: the tool's key pair for LTI 1.3, and what to register.

A platform checks the tool's client assertion against the tool's public key, which the instructor
registers: Canvas's developer key takes a public JWK (one key, pasted) or a public JWK URL (a key
set), Moodle's external tool a public key (PEM) or a keyset URL. Where the platform reads a key set
it picks the key by the assertion's ``kid``, which ``grade push lti`` sends: the key's RFC 7638
thumbprint, as pylti1p3 computes it, so that the key set and the assertion always agree.

Written, in a new folder or an empty one outside any course (a key inside one would be committed or
released with it): ``lti-key.pem`` (the private key, PKCS#8, readable by its owner only; point
``GRADE_LTI_KEY_FILE`` or ``[lti] key_file`` at it), ``lti-key.pub.pem`` (Moodle's "RSA key"),
``jwk.json`` (Canvas's "Public JWK") and ``jwks.json`` (the key set to serve at a "Keyset URL" or
"Public JWK URL"). An existing key is never replaced: the registration holds its public half.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from grader.errors import ExitStatus, GradeError
from grader.lms.push.common import require

KEY_BITS = 2048  # RS256 with a 2048-bit key: what LTI 1.3 and the platforms' docs use
FILES = ("lti-key.pem", "lti-key.pub.pem", "jwk.json", "jwks.json")


def _course_around(folder: Path) -> Path | None:
    """The course folder ``folder`` is in (a course.json in it or above it), if any."""
    for parent in [folder, *folder.parents]:
        if (parent / "course.json").is_file():
            return parent
    return None


def key_pair() -> tuple[bytes, str, dict]:
    """A new RSA key: its private PEM (PKCS#8), public PEM, and public JWK (``kty``, ``n``, ``e``,
    ``kid`` = its RFC 7638 thumbprint, ``alg`` RS256, ``use`` sig)."""
    require("pylti1p3")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from pylti1p3.registration import Registration

    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public, dict(Registration.get_jwk(public))


def main(*, out: Path) -> int:
    """Write the key pair and the JWKS into ``out``; print the kid and where each file goes.

    :raises GradeError: ``out`` is inside a course, or already holds a key.
    """
    out = Path(out).expanduser().resolve()
    course = _course_around(out)
    if course is not None:
        raise GradeError(
            f"{out}: inside the course folder {course}: keep the tool's private key "
            "out of the course (it is committed and released); e.g. "
            "--out ~/.config/grade/lti"
        )
    there = [name for name in FILES if (out / name).exists()]
    if there:
        raise GradeError(
            f"{out}: already holds {', '.join(there)}: a key the platform may have "
            "registered is never replaced (choose another --out)"
        )
    private, public, jwk = key_pair()
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / "lti-key.pem", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:  # the owner's only, from its first byte
        f.write(private)
    (out / "lti-key.pub.pem").write_text(public, encoding="ascii")
    (out / "jwk.json").write_text(json.dumps(jwk, indent=1) + "\n", encoding="ascii")
    (out / "jwks.json").write_text(json.dumps({"keys": [jwk]}, indent=1) + "\n", encoding="ascii")
    click.echo(f"kid: {jwk['kid']} (the key's RFC 7638 thumbprint; grade push lti sends it)")
    click.echo(f"private key: {out / 'lti-key.pem'} (set GRADE_LTI_KEY_FILE, or [lti] key_file)")
    click.echo(
        f"Canvas developer key, Public JWK: paste {out / 'jwk.json'}; or Public JWK URL: "
        f"serve {out / 'jwks.json'}"
    )
    click.echo(
        f"Moodle tool, Public key type RSA key: paste {out / 'lti-key.pub.pem'}; or Keyset "
        f"URL: serve {out / 'jwks.json'}"
    )
    return ExitStatus.OK
