"""``grade push``'s click group: options only, each command calling
:func:`grader.commands.push.main` (beside cli.py, which registers it: cli.py is near the 320-line
limit of a module)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.commands.options import course_option


@click.group()
def push() -> None:
    """Send grades and feedback to a live LMS: Canvas (REST API) or LTI 1.3 (AGS scores).

    \b
    The score folder is read and checked as grade export checks it; grader errors, refused
    files, blank submissions, students missing or not in the roster are never sent, only listed.
    Dry run by default: --yes posts. Credentials come from the environment or a config file
    outside the course (~/.config/grade/lms.toml), never from course.json, and are never printed.
    What went through is kept beside the score files (.grade-push): a push that stopped is
    continued by running it again, and only what changed is sent.
    """


def push_options(command):
    """What both pushes take: the folder, the roster, --yes, the credentials' file, the export's
    checks."""
    for option in reversed(
        [
            click.argument("scores_dir", type=click.Path(file_okay=False, path_type=Path)),
            click.option(
                "--roster",
                required=True,
                type=click.Path(dir_okay=False, path_type=Path),
                help="roster.csv: lms_id is the LMS user id each score goes to.",
            ),
            click.option(
                "--yes",
                is_flag=True,
                help="Post (without it: print what would be posted, send nothing).",
            ),
            click.option(
                "--config",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="The LMS credentials (TOML; default "
                "~/.config/grade/lms.toml; the GRADE_* environment variables win). "
                "Never inside the course folder.",
            ),
            click.option(
                "--allow-missing",
                is_flag=True,
                help="Exit 0 even when students are left out (still listed).",
            ),
            click.option(
                "--late-by-lms",
                is_flag=True,
                help="Send the points before the "
                "grader's late penalty (the LMS applies its own late policy: Canvas "
                "does, through LTI too).",
            ),
            click.option(
                "--allow-stale",
                is_flag=True,
                help="Push score files graded with another version of the course or grader.",
            ),
            course_option(
                help="The course the score files were graded with (its key checks "
                "their signatures)."
            ),
        ]
    ):
        command = option(command)
    return command


@push.command("canvas")
@push_options
@click.option(
    "--course-id", required=True, help="The Canvas course id (the number in the course's URL)."
)
@click.option(
    "--assignment-id",
    default=None,
    help="The Canvas assignment id (default: course.json lms.canvas_assignment_id).",
)
@click.option(
    "--attach-pages",
    is_flag=True,
    help="Attach each student's feedback page "
    "(<student>.html beside the score files, from grade autograde --html) to the "
    "comment, as a file.",
)
@click.option(
    "--overwrite-lms-grades",
    is_flag=True,
    help="Post over a grade changed in "
    "Canvas by hand since the last push (kept and listed otherwise). Excused "
    "submissions are never graded.",
)
@click.option(
    "--bulk/--one-by-one",
    default=None,
    help="Grades in Canvas's bulk update_grades "
    "jobs, or a request per student (default: bulk from 20 students to post).",
)
def push_canvas(
    scores_dir: Path,
    roster: Path,
    yes: bool,
    config: Path | None,
    allow_missing: bool,
    late_by_lms: bool,
    allow_stale: bool,
    course_path: Path,
    course_id: str,
    assignment_id: str | None,
    attach_pages: bool,
    overwrite_lms_grades: bool,
    bulk: bool | None,
) -> None:
    """Post each student's grade and a feedback comment (problems, diagnoses) to their Canvas
    submission.

    \b
    Only what differs from Canvas is posted: a second push of the same scores posts nothing.
    A grade a TA changed in Canvas since the last push, and an excused submission, are kept.
    Rate-limited requests are retried after a growing wait; three students in a row that Canvas
    throttles, fails or leaves unanswered stop the push (run it again to continue).
    Credentials: GRADE_CANVAS_URL and GRADE_CANVAS_TOKEN, or [canvas] url and token in the
    config file.
    Exit status: 0 all sent, already there or kept; 1 a student left out (unless
    --allow-missing), refused by Canvas or not known to be taken, or not tried (the push
    stopped: Canvas down, or a redirect to another host); 2 bad input, or Canvas unreachable,
    refusing the token or answering oddly before the first grade (nothing posted).
    Examples:
      grade push canvas scores/the-block/ --roster roster.csv --course-id 1234 -a the-block
      grade push canvas scores/the-block/ --roster roster.csv --course-id 1234 -a the-block \\
        --attach-pages --yes
    """
    from grader.commands import push as command

    sys.exit(
        command.main(
            lms="canvas",
            scores_dir=scores_dir,
            roster=roster,
            course_path=course_path,
            yes=yes,
            config=config,
            late_by_lms=late_by_lms,
            allow_stale=allow_stale,
            allow_missing=allow_missing,
            course_id=course_id,
            assignment_id=assignment_id,
            attach_pages=attach_pages,
            overwrite_lms_grades=overwrite_lms_grades,
            bulk=bulk,
        )
    )


@push.command("lti")
@push_options
@click.option(
    "--lineitem",
    required=True,
    metavar="URL",
    help="The AGS line item's URL; scores go to URL's path + /scores.",
)
def push_lti(
    scores_dir: Path,
    roster: Path,
    yes: bool,
    config: Path | None,
    allow_missing: bool,
    late_by_lms: bool,
    allow_stale: bool,
    course_path: Path,
    lineitem: str,
) -> None:
    """POST each student's AGS score object (as grade export --format lti writes it, with the
    feedback comment and its diagnoses) to the line item, when it changed since the last push.

    \b
    The token: OAuth 2.0 client credentials with a JWT assertion signed RS256 by the tool's
    private key (its kid in the header: see grade push lti-key), scope
    https://purl.imsglobal.org/spec/lti-ags/scope/score; renewed before it expires and on a 401.
    Each score is stamped with the time it changed, later than the last one sent to that user,
    and tells Canvas it is a re-grade (new_submission: false).
    Credentials: GRADE_LTI_CLIENT_ID, GRADE_LTI_TOKEN_URL, GRADE_LTI_KEY_FILE
    (GRADE_LTI_AUDIENCE), or [lti] client_id, token_url, key_file (audience) in the config file.
    Exit status: 0 all sent or unchanged; 1 a student left out (unless --allow-missing),
    refused or not known to be taken, or not tried (the push stopped); 2 bad input, or no token
    (nothing posted).
    Example:
      grade push lti scores/the-block/ --roster roster.csv -a the-block --yes \\
        --lineitem https://lms.example.edu/api/lti/courses/1/line_items/7
    """
    from grader.commands import push as command

    sys.exit(
        command.main(
            lms="lti",
            scores_dir=scores_dir,
            roster=roster,
            course_path=course_path,
            yes=yes,
            config=config,
            late_by_lms=late_by_lms,
            allow_stale=allow_stale,
            allow_missing=allow_missing,
            lineitem=lineitem,
        )
    )


@push.command("lti-key")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A new (or empty) folder outside the course, e.g. ~/.config/grade/lti.",
)
def push_lti_key(out: Path) -> None:
    """Write the tool's LTI 1.3 key pair and the JWKS to register on the platform.

    \b
    lti-key.pem (the private key, for GRADE_LTI_KEY_FILE), lti-key.pub.pem (Moodle's RSA key),
    jwk.json (Canvas's Public JWK) and jwks.json (to serve at a keyset / public JWK URL); the
    kid is the key's RFC 7638 thumbprint, which grade push lti sends with its assertion.
    An existing key is never replaced.
    Example:
      grade push lti-key --out ~/.config/grade/lti
    """
    from grader.commands import push_lti_key as command

    sys.exit(command.main(out=out))
