"""The instructor's commands of ``grade`` (a term: collect, autograde, release, report, export,
feedback, overrides): click options only; each calls plain functions from the modules."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from grader.commands.new_cli import new
from grader.commands.options import course_option
from grader.errors import ExitStatus
from grader.lms.exporters import FORMATS


@click.command()
@click.argument("submissions", type=click.Path(path_type=Path), required=False)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the score files, <student>.json.",
)
@click.option(
    "--jobs",
    "-j",
    default=os.cpu_count() or 1,
    show_default="the number of cores",
    type=click.IntRange(1, 256),
    help="Grader processes to run at once.",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Print nothing but errors (for scripts); the exit status tells.",
)
@click.option(
    "--nbgrader",
    "nbgrader_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Grade an nbgrader course's submitted/<student>/<assignment>/ folders instead.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Grade here (--jobs processes) or on a Dask cluster (--scheduler).",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="The Dask scheduler, e.g. tcp://10.0.0.5:8786.",
)
@click.option(
    "--sandbox",
    "level",
    type=click.Choice(["auto", "bwrap", "process"]),
    default="auto",
    show_default=True,
    help="Isolation of student code; auto picks the strongest this machine offers.",
)
@click.option(
    "--unsafe", is_flag=True, help="Allow grading without a sandbox (process isolation only)."
)
@click.option(
    "--run-as",
    "run_as",
    metavar="USER",
    default=None,
    help="With --sandbox process, as root: run student code as USER, who must not be able to read "
    "the "
    "course or write OUT (a container without bubblewrap, e.g. Gradescope's).",
)
@click.option("--force", is_flag=True, help="Regrade submissions whose score file is up to date.")
@click.option(
    "--html",
    "html",
    is_flag=True,
    help="Also write a feedback page, OUT/<student>.html (a regrade "
    "without --html removes the older page).",
)
@course_option
def autograde(
    submissions: Path | None,
    out_dir: Path,
    jobs: int,
    quiet: bool,
    nbgrader_dir: Path | None,
    executor: str,
    scheduler: str | None,
    level: str,
    unsafe: bool,
    run_as: str | None,
    force: bool,
    html: bool,
    course_path: Path,
) -> None:
    """Grade every submission in SUBMISSIONS with the public and hidden suites.

    \b
    SUBMISSIONS holds one entry per student, named after the student: a folder of modules, a .zip
    (unpacked safely), a notebook or a single .py file (the functions in it are graded; nothing in a
    notebook is run outside the sandbox). SUBMISSIONS may also be a single such file.
    Each student gets OUT/<student>.json, written atomically and signed with the course's key
    (.grade-key beside course.json, made on first need); lateness comes from timestamp.txt and
    course.json's due and late_policy. A broken submission never stops the batch. A submission whose
    score file already matches its files, the course and the grader is skipped (--force regrades
    it). One run at a time per OUT: a second one stops at once (exit 2) and names the first.
    \b
    Exit status: 0 every submission was graded; 1 a submission got no score file; 3 (otherwise) a
    submission was flagged "grader error": the grader's own machinery failed on it, so it is not
    exported, and the next run regrades it; 2 bad input, or OUT is in use; 130 interrupted (Ctrl-C
    or SIGTERM: the score files already written are kept).
    Examples:
      grade autograde submissions/ --out scores/ --jobs 2 --html
      grade autograde --nbgrader nbgrader_course/ --out scores/      #
      submitted/<student>/<assignment>/
    """
    from grader.commands import autograde as command

    sys.exit(
        command.main(
            course_path=course_path,
            submissions=submissions,
            out_dir=out_dir,
            jobs=jobs,
            quiet=quiet,
            nbgrader_dir=nbgrader_dir,
            executor=executor,
            scheduler=scheduler,
            level=level,
            unsafe=unsafe,
            run_as=run_as,
            force=force,
            html=html,
        )
    )


@click.command()
@click.argument(
    "lms", type=click.Choice(["canvas", "moodle", "blackboard", "gradescope", "github"])
)
@click.argument("download", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--roster",
    required=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="roster.csv: student, and the ids the download names people by (lms_id for "
    "Canvas, login for Blackboard, email or sis_id for Gradescope, github or login "
    "for GitHub; else the name).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The submissions folder to write (new or empty): one entry per student.",
)
@click.option(
    "--timezone",
    "timezone_name",
    metavar="ZONE",
    default=None,
    help="Blackboard: the IANA time zone its attempt names are in (e.g. "
    "Europe/Lisbon); without it no submission time is kept.",
)
@click.option(
    "--commit-time",
    is_flag=True,
    help="GitHub: keep the graded commit's time (HEAD's committer date, the "
    "student's clock) for the late policy.",
)
def collect(
    lms: str, download: Path, roster: Path, out: Path, timezone_name: str | None, commit_time: bool
) -> None:
    """Turn an LMS's download of submissions into one entry per roster student.

    \b
    DOWNLOAD is the download as the LMS gives it (a .zip) or unpacked (a folder):
      canvas      "Download Submissions": lovelaceada_101_5551234_hand-in.zip
      moodle      "Download all submissions": Full Name_12345_assignsubmission_file/
      blackboard  "Assignment File Download":
                  Assignment_username_attempt_2026-05-01-23-59-00_file.py (+ .txt)
      gradescope  "Export Submissions": submission_metadata.yml, submission_<id>/
      github      a GitHub Classroom clone folder: <assignment>-<username>/ clones
    Each student's files go to OUT/<student>/ (or OUT/<student>.zip, .py, .ipynb for one
    such file), named by the roster. The LMS's submission time, where the download has
    one, goes to OUT/.grade-collected.json, which grade autograde's late policy reads.
    Whatever could not be placed is listed, one line each.
    Exit status: 0 all placed; 1 something not placed (the rest is written); 2 bad input.
    Examples:
      grade collect canvas submissions.zip --roster roster.csv --out submissions/
      grade collect blackboard bb.zip --roster roster.csv --out subs/ --timezone Europe/Lisbon
    """
    from grader.commands import collect as command

    sys.exit(
        command.main(
            source=lms,
            download=download,
            roster=roster,
            out=out,
            timezone_name=timezone_name,
            commit_time=commit_time,
        )
    )


@click.command("release-feedback")
@click.argument("scores_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--to",
    "to_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write DIR/<student>/: their page and their feedback text.",
)
@click.option(
    "--nbgrader",
    "nbgrader_dir",
    default=None,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Write nbgrader's layout: COURSE_DIR/feedback/<student>/<assignment>/.",
)
@click.option(
    "--allow-stale",
    is_flag=True,
    help="Deliver score files graded with another version "
    "of the course or grader (every other check still holds).",
)
@course_option(help="The course the score files were graded with: its key checks them.")
def release_feedback(
    scores_dir: Path,
    to_dir: Path | None,
    nbgrader_dir: Path | None,
    allow_stale: bool,
    course_path: Path,
) -> None:
    """Hand each student their feedback: a folder each, or nbgrader's feedback/ layout.

    \b
    SCORES_DIR is one assignment's score folder (grade autograde's --out). Each trusted
    score file gives DIR/<student>/<assignment>.html (the page, when autograde ran with
    --html) and DIR/<student>/<assignment>-feedback.txt (what every LMS comment says:
    points, known mistakes, failed public tests, adjustments, lateness). A grader error
    or a refused file is listed and not delivered (exit status 1).
    Examples:
      grade release-feedback scores/the-block/ --to feedback/
      grade release-feedback scores-nbgrader/ --nbgrader nbgrader_course/ -a the-block
    """
    from grader.commands import release_feedback as command

    sys.exit(
        command.main(
            scores_dir=scores_dir,
            course_path=course_path,
            to_dir=to_dir,
            nbgrader_dir=nbgrader_dir,
            allow_stale=allow_stale,
        )
    )


@click.group()
def override() -> None:
    """The TA's changes of a grade: rows of the assignment's overrides CSV (course.json)."""


@override.command("add")
@click.argument("student")
@click.option(
    "--kind",
    type=click.Choice(["adjust", "bonus", "extension"]),
    default="adjust",
    show_default=True,
    help="adjust: points within 0 and the problem's; bonus: may "
    "exceed them; extension: the student's own due date.",
)
@click.option("--problem", default=None, help="The problem (adjust, bonus).")
@click.option(
    "--points",
    default=None,
    metavar="+N|-N",
    help="Points added, or removed with - (adjust, bonus).",
)
@click.option(
    "--due",
    default=None,
    metavar="ISO",
    help="extension: the student's due date, ISO 8601 with a time zone.",
)
@click.option("--reason", required=True, help="Why the grade changes (the student is told).")
@click.option("--by", "by", required=True, help="Who made the change (stays with the instructors).")
@course_option
def override_add(
    student: str,
    kind: str,
    problem: str | None,
    points: str | None,
    due: str | None,
    reason: str,
    by: str,
    course_path: Path,
) -> None:
    """Append a change of STUDENT's grade, checked as the overrides file's rows are.

    \b
    The next grade autograde applies it to the kept score file (re-scored; regraded with --html:
    a page needs the results).
    Examples:
      grade override add edsger_post_ln -a the-block --problem block --points +5 \\
          --reason "pre-LN wiring right in a later cell" --by ta.dijkstra
      grade override add grace_partial -a the-block --kind extension \\
          --due 2026-05-04T23:59:00+01:00 --reason "medical certificate" --by prof.hopper
    """
    from grader.commands import override as command

    sys.exit(
        command.add(
            course_path=course_path,
            student=student,
            kind=kind,
            problem=problem,
            points=points,
            due=due,
            reason=reason,
            by=by,
        )
    )


@click.command()
@course_option
def validate(course_path: Path) -> None:
    """Check the course: the reference scores full marks and the stubs zero, on every suite."""
    from grader.commands import validate as command

    sys.exit(command.main(course_path=course_path))


@click.command()
@click.option(
    "--out",
    "out_dir",
    default="release",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The student release folder (replaced whole).",
)
@click.option(
    "--nbgrader-dir",
    default="nbgrader_course",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The nbgrader course folder: source/<assignment>/ is (re)written, nothing else is "
    "touched.",
)
@course_option
def release(out_dir: Path, nbgrader_dir: Path, course_path: Path) -> None:
    """Write the student release and the nbgrader source notebook.

    \b
    OUT gets the stubs, the public suites, a student course.json (no solutions, no hidden suites), a
    README and the grader; NBGRADER_DIR/source/<assignment>/<assignment>.ipynb gets solution cells
    and locked test cells (hidden part between ### BEGIN/END HIDDEN TESTS). Both get the feedback
    data computed here in place of the solutions: the known mistakes' outputs on the public tests'
    inputs (found by grading the reference with the public tests: it must pass them all) and the
    worked example's reference values. Then run nbgrader on it, e.g.:
      grade release --out release/ --nbgrader-dir nbgrader_course/
      cd nbgrader_course && nbgrader generate_assignment <assignment> --force
    """
    from grader.commands import release as command

    sys.exit(command.main(out_dir=out_dir, nbgrader_dir=nbgrader_dir, course_path=course_path))


@click.command()
@click.argument(
    "scores_dirs",
    nargs=-1,
    required=True,
    metavar="SCORES_DIR...",
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(list(FORMATS)),
    help="The LMS (or csv: a table for people).",
)
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, path_type=Path),
    help="roster.csv: student and the columns the format needs, of "
    "lms_id,sis_id,login,email,name,section "
    "(needed for the LMS formats).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="The file to write (gradescope: a folder). "
    "Default: <assignment>-<format>.<ext> here (several folders: gradebook-<format>.<ext>).",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Exit 0 even when students are missing or refused (still listed); "
    "the others are exported.",
)
@click.option(
    "--allow-stale",
    is_flag=True,
    help="Export score files graded with another version of course.json, "
    "a suite, a solution or the grader (every other check still holds).",
)
@click.option(
    "--late-by-lms",
    is_flag=True,
    help="Export the points before the grader's late penalty: "
    "the LMS applies its own late policy (Canvas does).",
)
@click.option(
    "--canvas-assignment-id",
    help="Canvas: the assignment's id (default: course.json lms; one folder only).",
)
@click.option("--points-possible", is_flag=True, help="Canvas: add the 'Points Possible' row.")
@click.option(
    "--moodle-key",
    type=click.Choice(["email", "username", "idnumber"]),
    default="email",
    show_default=True,
    help="Moodle: the user field the rows are matched on.",
)
@click.option(
    "--blackboard-column-id",
    help="Blackboard: the Grade Center column id (default: course.json lms; one folder only).",
)
@course_option(
    help="The course the score files were graded with: its key checks their signatures; also the "
    "LMS "
    "ids."
)
def export(
    scores_dirs: tuple[Path, ...],
    fmt: str,
    roster: Path | None,
    out: Path | None,
    allow_missing: bool,
    allow_stale: bool,
    late_by_lms: bool,
    canvas_assignment_id: str | None,
    points_possible: bool,
    moodle_key: str,
    blackboard_column_id: str | None,
    course_path: Path,
) -> None:
    """Write the score files in SCORES_DIR in an LMS's import format, after checking each against
    the schema.

    \b
    A score file is refused (left out, listed on stderr) when the grader failed on it (a rerun of
    autograde regrades it), its signature does not verify (edited after grading, or not written by
    autograde), its score is not the sum of its problems' scores, or it was graded with another
    version of the course or grader (--allow-stale exports those). Refused files, students in the
    roster with no score file, and score files with no roster row make the exit status 1 (unless
    --allow-missing); they are never silently dropped.
    Several SCORES_DIRs (one assignment's score files each) make one gradebook, a column per
    assignment (canvas, moodle, blackboard, csv; lti and gradescope take one folder): each folder's
    assignment is the one its files name, loaded from course.json with its LMS ids (so no
    --assignment), and checked as above; a student refused or missing in one gets an empty cell
    there, listed under that assignment's name.
    Examples:
      grade export scores/ --format canvas --roster roster.csv --canvas-assignment-id 48213
      --late-by-lms grade export scores/ --format moodle --roster roster.csv --moodle-key username
      --out moodle.csv grade export scores/ --format csv --out grades.csv
      grade export scores/the-block/ scores/the-modern-block/ --format canvas --roster roster.csv
    """
    from grader.commands.export import export as run_export
    from grader.lms.exporters.common import Options

    options = Options(
        late_by_lms=late_by_lms,
        points_possible=points_possible,
        moodle_key=moodle_key,
        canvas_assignment_id=canvas_assignment_id,
        blackboard_column_id=blackboard_column_id,
    )
    result = run_export(list(scores_dirs), fmt, out, roster, options, course_path, allow_stale)
    for line in result.warnings:
        click.echo(f"warning: {line}", err=True)
    for line in result.refused:
        click.echo(f"refused: {line}", err=True)
    for line in result.missing:
        click.echo(f"missing: {line}", err=True)
    click.echo(f"{result.out}: {result.rows} students ({fmt})")
    left_out = result.missing or result.refused
    sys.exit(ExitStatus.FAILED if left_out and not allow_missing else ExitStatus.OK)


@click.command("gradescope-zip")
@click.option(
    "--out",
    default="autograder.zip",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The zip to upload as the Gradescope autograder.",
)
@course_option
def gradescope_zip(out: Path, course_path: Path) -> None:
    """Build the Gradescope autograder zip: setup.sh and run_autograder at its root, the grader and
    the course.

    \b
    On Gradescope it grades /autograder/submission with the public and hidden suites and writes
    /autograder/results/results.json. Example:
      grade gradescope-zip --out autograder.zip
    """
    from grader.commands import gradescope_zip as command

    sys.exit(command.main(out=out, course_path=course_path))


@click.command()
@click.argument(
    "scores_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write it as a page.",
)
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Who should have a score file.",
)
@click.option(
    "--similarity",
    metavar="SUBMISSIONS",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Also rank the pairs of these submissions whose code is alike (the stubs not counted).",
)
@click.option(
    "--allow-stale",
    is_flag=True,
    help="Count score files graded with another course or grader version.",
)
@course_option(help="The course the score files were graded with: its key checks their signatures.")
def report(
    scores_dirs: tuple[Path, ...],
    html_path: Path | None,
    roster: Path | None,
    similarity: Path | None,
    allow_stale: bool,
    course_path,
) -> None:
    """Histograms, failure rates, diagnoses, points lost, grader errors, blank, missing and late
    work of SCORES_DIRS (one assignment each, checked as grade export checks them). E.g.: grade
    report scores/a/ --html class.html"""
    from grader.commands import report as command

    sys.exit(
        command.main(
            scores_dirs=scores_dirs,
            course_path=course_path,
            html_path=html_path,
            roster=roster,
            allow_stale=allow_stale,
            similarity=similarity,
        )
    )


COMMANDS = (
    autograde,
    collect,
    release_feedback,
    override,
    validate,
    release,
    export,
    gradescope_zip,
    report,
    new,
)
