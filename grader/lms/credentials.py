"""The LMS credentials ``grade push`` needs, from the environment or a config file outside the
course.

Never from course.json or a score file (both travel with the course), and never printed: the token
and the key are kept out of every ``repr``. The file is TOML, by default
``$XDG_CONFIG_HOME/grade/lms.toml`` (``~/.config/grade/lms.toml``)::

    [canvas]
    url = "https://canvas.example.edu"
    token = "..."                      # an access token (Account > Settings > New access token)

    [lti]
    client_id = "10000000000042"       # the tool's client id on the platform
    token_url = "https://canvas.example.edu/login/oauth2/token"
    key_file = "~/.config/grade/lti-key.pem"   # the tool's RSA private key (PEM)
    audience = "..."                   # optional: the token endpoint's aud, when it is not
    token_url

Each value may instead come from the environment, which wins: ``GRADE_CANVAS_URL``,
``GRADE_CANVAS_TOKEN``, ``GRADE_LTI_CLIENT_ID``, ``GRADE_LTI_TOKEN_URL``, ``GRADE_LTI_KEY_FILE``,
``GRADE_LTI_AUDIENCE``. A config file or key file inside the course's folder is refused: it would be
committed, or released, with the course.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from grader.errors import GradeError


@dataclass(frozen=True)
class CanvasCredentials:
    url: str
    token: str = field(repr=False)


@dataclass(frozen=True)
class LtiCredentials:
    client_id: str
    token_url: str
    private_key: str = field(repr=False)  # PEM text
    audience: str | None = None


def default_config(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/grade/lms.toml``, else ``~/.config/grade/lms.toml``."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "grade" / "lms.toml"


def _outside(path: Path, course_dir: Path, what: str) -> Path:
    path = path.expanduser().resolve()
    if path.is_relative_to(course_dir.resolve()):
        raise GradeError(
            f"{path}: {what} inside the course folder {course_dir}: keep LMS credentials out of "
            "the course (it is committed and released); move it, e.g. to ~/.config/grade/"
        )
    return path


def _section(
    config: Path | None, course_dir: Path, env: Mapping[str, str], name: str
) -> tuple[dict, Path]:
    """The ``[name]`` table of the config file (empty when the default file does not exist) and its
    path."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, as a package (the push extra)
        import tomli as tomllib

    given = config is not None
    path = _outside(config if given else default_config(env), course_dir, "the LMS config file")
    if not path.is_file():
        if given:
            raise GradeError(f"{path}: config file not found")
        return {}, path
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise GradeError(f"{path}: not a readable TOML file: {err}") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise GradeError(f"{path}: field {name!r}: must be a table ([{name}])")
    for key, value in table.items():
        if not isinstance(value, str):
            raise GradeError(f"{path}: field '{name}.{key}': must be a string")
    return table, path


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def https_url(value: str, path: Path | str, field: str) -> str:
    """An https URL (http only to this machine: a token sent in clear is a token given away)."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if not parts.netloc or not (
        parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
    ):
        raise GradeError(f"{path}: field {field!r}: {value!r} must be an https:// URL")
    return value


def _value(
    table: dict, path: Path, env: Mapping[str, str], section: str, key: str, required: bool = True
):
    variable = f"GRADE_{section.upper()}_{key.upper()}"
    value = env.get(variable) or table.get(key)
    if required and not value:
        raise GradeError(
            f"{path}: field '{section}.{key}': not set (nor {variable} in the environment)"
        )
    return value or None


def canvas(
    config: Path | None, course_dir: Path, env: Mapping[str, str] = os.environ
) -> CanvasCredentials:
    """The Canvas URL and access token.

    :raises GradeError: one missing, or the config file is inside the course or unreadable.
    """
    table, path = _section(config, course_dir, env, "canvas")
    url = https_url(_value(table, path, env, "canvas", "url").rstrip("/"), path, "canvas.url")
    if url.endswith("/api/v1"):
        raise GradeError(f"{path}: field 'canvas.url': the instance's address, without /api/v1")
    return CanvasCredentials(url, _value(table, path, env, "canvas", "token"))


def lti(
    config: Path | None, course_dir: Path, env: Mapping[str, str] = os.environ
) -> LtiCredentials:
    """The tool's client id, the platform's token URL, the tool's private key (read from its file).

    :raises GradeError: one missing, the key file unreadable, or a file inside the course.
    """
    table, path = _section(config, course_dir, env, "lti")
    key_file = _outside(
        Path(_value(table, path, env, "lti", "key_file")), course_dir, "the LTI key file"
    )
    try:
        key = key_file.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        raise GradeError(f"{key_file}: the LTI private key cannot be read: {err}") from None
    if "PRIVATE KEY-----" not in key:
        raise GradeError(f"{key_file}: not a PEM private key (-----BEGIN PRIVATE KEY-----)")
    token_url = https_url(_value(table, path, env, "lti", "token_url"), path, "lti.token_url")
    return LtiCredentials(
        _value(table, path, env, "lti", "client_id"),
        token_url,
        key,
        _value(table, path, env, "lti", "audience", required=False),
    )
