"""``grade gradescope-zip``: the Gradescope autograder, a zip with ``setup.sh`` and
``run_autograder`` at its root.

Gradescope unpacks it into ``/autograder/source``; ``setup.sh`` installs the grader's requirements,
and ``run_autograder`` grades ``/autograder/submission`` with the public and hidden suites (``grade
autograde``), then writes ``/autograder/results/results.json`` (``grade export --format
gradescope``). The zip holds the grader package, ``requirements.txt``, and under ``course/`` the
course.json with its suites and solutions.
"""

from __future__ import annotations

import io
import json
import zipfile
from importlib import metadata
from pathlib import Path, PurePosixPath

from grader.commands.release import PACKAGE, Content, package_files
from grader.course.manifest import Course, settings
from grader.errors import ExitStatus, GradeError
from grader.report import write_atomic

TEMPLATES = Path(__file__).with_name("gradescope")
EXECUTABLE = 0o755


def requirements() -> str:
    """The grader's own runtime requirements (no extras), one per line, from its installed metadata.

    :raises GradeError: the grader is not installed (``pip install -e .``), so they are unknown.
    """
    dists = metadata.packages_distributions().get(PACKAGE.name, [])
    if not dists:
        raise GradeError(
            "the grader is not installed (run `pip install -e .`): its requirements are unknown"
        )
    wanted = [r for r in metadata.requires(dists[0]) or [] if "extra ==" not in r]
    return "".join(f"{r}\n" for r in wanted)


def course_files(course: Course) -> dict[PurePosixPath, Content]:
    """course.json (this assignment's settings alone), the solutions, every suite folder's Python
    files and the feedback files course.json names, under ``course/``, relative as they are.

    :raises GradeError: the course has no solutions or hidden suites, or a file lies outside its
        folder.
    """
    if course.solutions is None or any(p.hidden is None for p in course.problems):
        raise GradeError(
            f"{course.path}: the autograder needs the solutions and every hidden suite"
        )
    folders = {course.solutions} | {s.parent for p in course.problems for s in (p.public, p.hidden)}
    files = {f for folder in folders for f in folder.glob("*.py")}
    # the catalogue and the worked example the feedback names mistakes from
    files |= {
        path for path in vars(course.feedback).values() if path is not None and path.is_file()
    }
    # course.json as this one assignment (a course's other assignments, and their files, stay home),
    # without
    # the instructor's overrides (outside the fingerprint, so the same course_sha256)
    shipped = {
        k: v for k, v in settings(course.path, course.assignment)[0].items() if k != "overrides"
    }
    found: dict[PurePosixPath, Content] = {
        PurePosixPath("course", "course.json"): json.dumps(shipped, indent=2)
    }
    for path in sorted(files):
        try:
            rel = path.resolve().relative_to(course.root)
        except ValueError:
            raise GradeError(f"{course.path}: {path} is outside the course folder") from None
        found[PurePosixPath("course", rel.as_posix())] = path
    return found


def build(course: Course, out: Path) -> list[str]:
    """Write the autograder zip to ``out`` (atomically) and return its entry names."""
    entries: dict[str, bytes] = {
        "setup.sh": (TEMPLATES / "setup.sh").read_bytes(),
        "run_autograder": (TEMPLATES / "run_autograder").read_bytes(),
        "requirements.txt": requirements().encode(),
    }
    for rel, content in {**package_files(), **course_files(course)}.items():
        entries[str(rel)] = (
            content.encode() if isinstance(content, str) else Path(content).read_bytes()
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (
                (EXECUTABLE if name in ("setup.sh", "run_autograder") else 0o644) | 0o100000
            ) << 16
            zf.writestr(info, data)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(Path(out), buffer.getvalue())
    return list(entries)


def main(*, out: Path, course_path: Path) -> ExitStatus:
    """Build the autograder zip of the course at ``course_path`` into ``out``, saying so."""
    import click

    from grader.course import manifest as course_mod

    entries = build(course_mod.load(course_path), out)
    click.echo(
        f"{out}: {len(entries)} files (setup.sh, run_autograder, requirements.txt, grader/, "
        "course/)"
    )
    return ExitStatus.OK
