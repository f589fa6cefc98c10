"""``grade autograde``: grade a class's submissions with the public and hidden suites, one signed
score file each.

The batch holds --out's lock, reads what was handed in (:mod:`grader.intake.collect`), skips the
score files still up to date, grades the rest on an executor (:mod:`grader.grading.executors`), then
scores, signs and writes each result as it arrives; one bad submission never stops the batch.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import click

from grader import __version__, report, scoring
from grader.commands import outlock, provenance, regrade_log
from grader.course import manifest as course_mod
from grader.course import overrides as overrides_mod
from grader.course.manifest import Course
from grader.errors import ExitStatus, GradeError
from grader.feedback.glyphs import console
from grader.grading import executors, signature
from grader.grading.results import Job
from grader.intake import collect
from grader.sandbox import policy as sandbox


def main(
    *,
    course_path: Path,
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
) -> ExitStatus:
    """Grade every submission in ``submissions`` into ``out_dir``; the exit status (see ``grade
    autograde --help``)."""
    course = course_mod.load(course_path)
    if (executor == "dask") != (scheduler is not None):
        raise GradeError("--executor dask and --scheduler ADDRESS go together")
    level = choose_level(level, unsafe, run_as)
    sandbox.run_as_ids(run_as, level)  # a one-line error before anything is touched
    table = overrides_mod.load(
        course.overrides, {p.name: p.points for p in course.problems}, course.due
    )
    key_file = signature.key_path(course.path)
    if out_dir.resolve() in key_file.parents:
        raise GradeError(
            f"--out {out_dir}: holds the course folder, where the grader's key {key_file.name} is: "
            "give the score files a folder of their own (e.g. --out scores/)"
        )
    written: list[str] = []
    # `kill`, a batch system's time limit, systemd: stop exactly as Ctrl-C does (whole files kept,
    # none half).
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with outlock.hold(out_dir):  # before anything in --out is touched
            _refuse_another_assignments(out_dir, course.assignment)
            key = signature.load_key(course.path, create=True)
            before = regrade_log.snapshot(out_dir)  # to say what this run changes
            status = _batch(
                course,
                submissions,
                out_dir,
                jobs,
                quiet,
                nbgrader_dir,
                executor,
                scheduler,
                level,
                force,
                html,
                key,
                written,
                run_as,
                table,
            )
            regrade_log.say(out_dir, before, quiet)
    except KeyboardInterrupt:
        click.echo(
            f"Interrupted: the score files already written are kept in {out_dir} ({len(written)} "
            "by this "
            "run); run the same command again to grade the rest.",
            err=True,
        )
        status = ExitStatus.INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
    return status


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _refuse_another_assignments(out_dir: Path, assignment: str) -> None:
    """--out holding another assignment's score files would have them overwritten, student by
    student: refused. (It parses each file once more than the cache check does; keeping them all
    parsed would cost the memory the summary saves.)"""
    for path in sorted(out_dir.glob("*.json")) if out_dir.is_dir() else []:
        try:
            other = json.loads(path.read_text(encoding="utf-8")).get("assignment")
        except (OSError, ValueError, AttributeError):
            continue  # not a score file we could read: regraded as today
        if isinstance(other, str) and other != assignment:
            raise GradeError(
                f"--out {out_dir}: holds {other!r}'s score files ({path.name}), not "
                f"{assignment!r}'s: "
                f"give each assignment a folder of its own (e.g. --out scores/{assignment}/)"
            )


def _batch(
    course: Course,
    submissions: Path | None,
    out_dir: Path,
    jobs: int,
    quiet: bool,
    nbgrader_dir: Path | None,
    executor: str,
    scheduler: str | None,
    level: str,
    force: bool,
    html: bool,
    key: bytes,
    written: list[str],
    run_as: str | None = None,
    table: dict[str, overrides_mod.StudentOverrides] | None = None,
) -> ExitStatus:
    """The batch, with ``out_dir`` locked: its exit status. ``written`` gets each student whose file
    it wrote."""
    for stale in out_dir.glob(".score-*.tmp"):  # left by a batch killed mid-write
        stale.unlink()
    if run_as:  # the private copies must be reachable by that user, --out must not be
        import tempfile

        work = Path(tempfile.mkdtemp(prefix="grade-work-"))
        work.chmod(0o711)
    else:
        work = out_dir / ".grading"  # the collected hand-ins (the zygotes' spools of private
        # copies: in memory, policy.scratch)
        shutil.rmtree(work, ignore_errors=True)
    flagged: list[str] = []
    try:
        subs, skipped = collect.gather(
            course,
            work / "collected",
            submissions=submissions,
            nbgrader=nbgrader_dir,
            assignment=course.assignment if nbgrader_dir else None,
        )
        by_student = {s.student: s for s in subs}
        # where each was handed in, before grading: export refuses a file graded from other content
        provenance.record(
            out_dir, key, course.assignment, {s.student: s.handed_in for s in subs if s.handed_in}
        )
        job_list = [Job(s.student, s.folder) for s in subs]
        err = console(stderr=True)
        for line in skipped:
            err.print(line, markup=False)
        table = table or {}
        for student in sorted(
            set(table) - set(by_student)
        ):  # a typo in a student id would do nothing
            err.print(
                f"{course.overrides}: overrides for {student!r}, who has no submission here",
                markup=False,
            )
        for student in sorted(
            s
            for s in table
            if s in by_student and table[s].extension is not None and by_student[s].when is None
        ):  # a folder's or zip's lateness is the LMS's
            err.print(
                f"{course.overrides}: line {table[student].extension.line}: an extension for "
                f"{student!r}, "
                "whose submission (a folder, zip or file) carries no submission time the grader "
                "reads: "
                "it changes nothing here; grant it in the LMS, which applies the late policy",
                markup=False,
                soft_wrap=True,
            )
        docs, failures = [], []
        if not force:
            kept, rescored = _kept(
                out_dir, job_list, course, sandbox.describe(level), key, html, by_student, table
            )
            docs += kept
            unchanged = {doc["student"] for doc in kept}
            job_list = [job for job in job_list if job.student not in unchanged]
            if kept and not quiet:
                err.print(
                    f"{len(kept)} submissions unchanged since they were graded (--force regrades "
                    "them)"
                    + (
                        f"; {rescored} re-scored for overrides or lateness, not regraded"
                        if rescored
                        else ""
                    )
                )

        _refuse_a_broken_course(course, out_dir, job_list, key, level, work, run_as)

        def on_result(outcome: Finished) -> None:
            student = outcome.student
            if outcome.failure:  # one bad submission never stops the batch
                failures.append(student)
                err.print(f"no score file for {student}: {outcome.failure}", markup=False)
                return
            written.append(student)
            docs.append(outcome.summary)
            if outcome.summary["status"] == "grader_error":
                # Said even with --quiet: the instructor must know this is no grade, and that a
                # rerun fixes it.
                flagged.append(student)
                err.print(
                    f"grader error: {student}: {outcome.error}; not exported; a rerun regrades it",
                    markup=False,
                )
                done(
                    f"grader error on {student}: not graded, not exported ({outcome.seconds:.1f} s)"
                )
                return
            notes = "".join(f"\n  {note}" for note in outcome.notes)
            summary = outcome.summary
            blank = " (blank)" if summary.get("blank") else ""
            why = f": {outcome.error}" if outcome.error else ""
            done(
                f"graded {student}: {summary['score']:g}/{summary['max_score']:g}{blank}{why} "
                f"({outcome.seconds:.1f} s)" + notes
            )

        finish = Finish(course, out_dir, key, html, table, by_student)
        with report.progress(len(job_list), err, quiet) as done:
            if job_list and executor == "dask":
                executors.run_dask(
                    course,
                    job_list,
                    lambda graded: on_result(finish(graded)),
                    hidden=True,
                    level=level,
                    scheduler=scheduler,
                )
            elif job_list:
                executors.run_parallel(
                    course,
                    job_list,
                    on_result,
                    hidden=True,
                    processes=jobs,
                    level=level,
                    tmp_root=work,
                    run_as=run_as,
                    finish=finish,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    docs.sort(key=lambda d: d["student"])
    if not quiet:
        report.summary_table(
            docs,
            console(),
            title=f"{course.assignment}: {len(docs)} submissions "
            f"(sandbox: {sandbox.describe(level)})",
        )
    missing = sorted({s.student for s in subs} - {d["student"] for d in docs})
    if missing:
        err.print(f"no score file for: {', '.join(missing)}", markup=False)
        return ExitStatus.FAILED
    if flagged:
        err.print(
            f"grader error on {len(flagged)} submissions ({', '.join(sorted(flagged))}): run the "
            "same "
            "command again to regrade them",
            markup=False,
        )
        return ExitStatus.GRADER_ERROR
    return ExitStatus.OK


def _refuse_a_broken_course(
    course: Course,
    out_dir: Path,
    job_list: list[Job],
    key: bytes,
    level: str,
    work: Path,
    run_as: str | None,
) -> None:
    """Before a graded score file is replaced, the course must pass its own reference: else its own
    fault would become every student's grade or grader error (:mod:`grader.commands.canary`).

    :raises GradeError: one line naming course.json, how the reference fails and the files kept;
        no submission is graded, no score file written."""
    at_stake = [job.student for job in job_list if _graded(out_dir / f"{job.student}.json", key)]
    if not at_stake:  # nothing graded to lose
        return
    from grader.commands import canary

    why = canary.failure(course, level, work, run_as)
    if why is not None:
        names = ", ".join(at_stake[:5]) + (f" and {len(at_stake) - 5} more" * (len(at_stake) > 5))
        raise GradeError(
            f"{course.path}: the course's own reference {why}: nothing was graded, "
            f"and the graded score files of {names} are kept; fix the course (grade "
            "validate shows each failure) and rerun"
        )


def _graded(path: Path, key: bytes) -> bool:
    """Whether ``path`` is a graded score file signed with ``key``: one a grading could lose."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        report.validate(doc)
    except (OSError, ValueError, GradeError):
        return False
    return doc["status"] == "graded" and signature.verify(doc, key)


@dataclass(frozen=True)
class Finished:
    """What became of one graded submission: its score file's summary
    (:func:`grader.report.summary_of`), or why it has none (``failure``); its ``error``, the notes
    on what was handed in, and the seconds its grading took."""

    student: str
    summary: dict | None
    failure: str = ""
    error: str = ""
    notes: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class Finish:
    """Score, sign and write a graded submission's file (and its page, with ``html``), in the grader
    process that graded it: the parent gets a summary of a few hundred bytes, not the results, and
    has no work of its own."""

    course: Course
    out_dir: Path
    key: bytes
    html: bool
    overrides: dict
    submissions: dict

    def __call__(self, graded) -> Finished:
        student = graded.job.student
        try:
            submission = self.submissions[student]
            doc = scoring.finish(
                collect.annotate(
                    scoring.score(self.course, graded, hidden=True), submission, self.course
                ),
                self.course,
                self.overrides.get(student),
                submission.when,
            )
            doc = signature.sign(doc, self.key)
            report.write_score(doc, self.out_dir / f"{student}.json")
            page_path = self.out_dir / f"{student}.html"
            if self.html:
                from grader.feedback import page

                report.write_atomic(page_path, page.render(doc, page.feedback_of(graded.results)))
            else:
                page_path.unlink(
                    missing_ok=True
                )  # an older grading's page: never left beside a new score
        except Exception as exc:  # one bad submission never stops the batch
            return Finished(student, None, f"{type(exc).__name__}: {exc}", seconds=graded.seconds)
        return Finished(
            student,
            report.summary_of(doc),
            error=doc.get("error", ""),
            notes=tuple(doc.get("submission_notes", [])),
            seconds=graded.seconds,
        )


def choose_level(level: str, unsafe: bool, run_as: str | None = None) -> str:
    """The isolation level for autograde: refuse to run without a sandbox unless --unsafe."""
    available = sandbox.available_levels()
    chosen = available[0] if level == "auto" else level
    why = sandbox.bwrap_unusable()
    fix = "make bubblewrap usable (Debian: apt-get install bubblewrap libseccomp2)"
    if chosen not in available:
        raise GradeError(f"--sandbox {level}: not available on this machine ({why}): {fix}")
    if chosen == sandbox.PROCESS and not unsafe:
        raise GradeError(
            f"no sandbox ({why}): student code would run with only process "
            f"isolation; {fix} or pass --unsafe"
        )
    if level == "auto" and chosen == sandbox.PROCESS and (note := sandbox.fallback_note()):
        click.echo(note, err=True)
    if chosen == sandbox.PROCESS and os.name == "posix" and os.geteuid() == 0 and not run_as:
        click.echo(
            "Warning: --unsafe as root: student code runs as root with only process isolation and "
            "can "
            "read, change or kill anything on this machine; grade as an unprivileged user, or use "
            "bwrap.",
            err=True,
        )
    return chosen


def _kept(
    out_dir: Path,
    job_list: list[Job],
    course: Course,
    sandbox_level: str,
    key: bytes,
    html: bool,
    by_student: dict,
    table: dict,
) -> tuple[list[dict], int]:
    """The summaries of the score files kept (not regraded), and how many of them were re-scored: a
    kept file gets the current overrides and submission time applied afresh
    (:func:`grader.scoring.finish`), and one that changes is re-signed and rewritten, its code not
    run again. A requested page is an output too: a student without one, or whose page a re-scoring
    would leave stale, is regraded (the page needs the results)."""
    kept, rescored = [], 0
    for job in job_list:
        doc = up_to_date(out_dir, job, course, sandbox_level, key)
        if doc is None:
            continue
        submission = by_student[job.student]
        page = out_dir / f"{job.student}.html"
        fresh = scoring.finish(
            collect.annotate(
                {k: v for k, v in doc.items() if k != "submission_notes"}, submission, course
            ),
            course,
            table.get(job.student),
            submission.when,
        )
        if fresh != {k: v for k, v in doc.items() if k != "signature"}:
            if html:
                continue
            doc = signature.sign(fresh, key)
            report.write_score(doc, out_dir / f"{job.student}.json")
            page.unlink(missing_ok=True)  # an older page: never left beside a new score
            rescored += 1
        elif html and not page.is_file():
            continue
        kept.append(report.summary_of(doc))
    return kept, rescored


def up_to_date(
    out_dir: Path, job: Job, course: Course, sandbox_level: str, key: bytes
) -> dict | None:
    """The existing score file of ``job`` if it is one to trust (schema-valid, graded, not a grader
    error, signed with ``key``) and was made from the same files, course, grader and sandbox (its
    overrides and lateness are re-applied by :func:`_kept`). Anything else is regraded, never an
    error."""
    try:
        doc = json.loads((out_dir / f"{job.student}.json").read_text(encoding="utf-8"))
        report.validate(doc)
    except (OSError, ValueError, GradeError):
        return None
    same = (
        doc["status"] == "graded"
        and signature.verify(doc, key)
        and doc.get("course_sha256") == course.sha256
        and doc.get("grader_version") == __version__
        and doc.get("sandbox") == sandbox_level
        and "error" not in doc
        and doc.get("submission_sha256") == scoring.submission_sha256(job.path)
    )
    return doc if same else None
